import { RE2JS } from 're2js';
import { Lru } from '../../core/lru.js';
import { MAX_PATTERN_LENGTH } from './identity.js';
import { issuerProblem } from './issuer-url.js';

/**
 * Claim patterns are RE2 regular expressions (https://github.com/google/re2/wiki/Syntax),
 * matched by `re2js` against the whole claim. RE2 runs in time linear in the input, so no
 * pattern can be written that blocks the event loop (the classic `(a+)+b`); the price is
 * that RE2 has no backreferences or lookaround, and such patterns are refused at create.
 *
 * Linear is not free: the cost is input length × program size. Both are bounded: a pattern
 * compiles to at most MAX_PATTERN_PROGRAM instructions, and a claim longer than
 * MAX_MATCHED_CLAIM_LENGTH never matches. Together that is well under a millisecond.
 */
export const MAX_PATTERN_PROGRAM = 256;

/** Longest claim value a pattern is ever run against; longer ones do not match. */
export const MAX_MATCHED_CLAIM_LENGTH = 1024;

/** Compiled patterns, shared by every exchange (identities are few, exchanges many). */
const compiled = new Lru<string, RE2JS | Error>(1024);

/**
 * The compiled form of `pattern`, from a bounded cache.
 *
 * @throws Error when RE2 cannot express the pattern, or it is too long or too large.
 */
export function compilePattern(pattern: string): RE2JS {
  let re = compiled.get(pattern);
  if (re === undefined) {
    re = compileUncached(pattern);
    compiled.set(pattern, re);
  }
  if (re instanceof Error) throw re;
  return re;
}

function compileUncached(pattern: string): RE2JS | Error {
  if (pattern.length === 0) return new Error('must not be empty');
  if (pattern.length > MAX_PATTERN_LENGTH) {
    return new Error(`must be at most ${MAX_PATTERN_LENGTH} characters`);
  }
  // Compiling expands counted repetitions, so `(?:x…x){1000}` would cost a long compile
  // before programSize() could refuse it: estimate from the text first.
  if (estimatedProgramSize(pattern) > 4 * MAX_PATTERN_PROGRAM) return new Error(TOO_COMPLEX);
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (e) {
    // RE2's own words say what is wrong ("invalid or unsupported Perl syntax: `(?=`").
    const why = e instanceof Error ? e.message.replace(/^error parsing regexp: /, '') : '';
    return new Error(`must be a valid RE2 regular expression${why ? ` (${why})` : ''}`);
  }
  if (re.programSize() > MAX_PATTERN_PROGRAM) return new Error(TOO_COMPLEX);
  return re;
}

const TOO_COMPLEX = 'is too complex (fewer alternatives and repetitions, please)';

/** Where the character class opened at `start` ends (its `]`), by a plain scan. */
function classEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === '^') i++;
  if (pattern[i] === ']') i++; // a leading ] is a literal
  for (; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (c === '[' && pattern[i + 1] === ':') {
      const close = pattern.indexOf(':]', i + 2);
      if (close !== -1) i = close + 1;
    } else if (c === ']') return i;
  }
  return pattern.length;
}

/**
 * A cheap upper estimate of the compiled size of `pattern`, from its text alone: one per
 * atom (a character, an escape, a class), a group the sum of its contents, and `{n,m}`
 * multiplying what it repeats. Only used to refuse early; programSize() has the last word.
 */
export function estimatedProgramSize(pattern: string): number {
  const stack: number[] = [0];
  let last = 0;
  const add = (n: number) => {
    stack[stack.length - 1]! += n;
    last = n;
  };
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      if (pattern[i + 1] === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        const stop = end === -1 ? pattern.length : end;
        add(stop - (i + 2));
        i = end === -1 ? pattern.length : end + 1;
        continue;
      }
      // \p{Greek}, \x{10FFFF}: the braces belong to the escape.
      const brace = /^\\[pPx]\{[^}]*\}/.exec(pattern.slice(i));
      i += brace ? brace[0].length - 1 : 1;
      add(1);
    } else if (c === '[') {
      i = classEnd(pattern, i);
      add(1);
    } else if (c === '(') {
      stack.push(0);
    } else if (c === ')') {
      const inner = stack.length > 1 ? stack.pop()! : 0;
      add(inner);
    } else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
      if (!m) add(1);
      else {
        const times = Math.max(Number(m[1]), m[3] ? Number(m[3]) : m[2] ? Number(m[1]) + 1 : 0);
        stack[stack.length - 1]! += last * Math.max(times - 1, 0);
        last *= Math.max(times, 1);
        i += m[0].length - 1;
      }
    } else if (c === '*' || c === '+' || c === '?' || c === '|') {
      stack[stack.length - 1]! += 1;
    } else {
      add(1);
    }
  }
  return stack.reduce((a, b) => a + b, 0);
}

/** Why `pattern` is unacceptable as a claim pattern, or undefined when it is fine. */
export function patternProblem(pattern: string): string | undefined {
  try {
    compilePattern(pattern);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * Whether `value` is a string that `pattern` matches as a whole. False, never an error, for
 * anything else: a non-string, a value over MAX_MATCHED_CLAIM_LENGTH, or a stored pattern
 * that no longer compiles (stored before patterns were RE2) — a pattern that cannot be
 * evaluated safely accepts nothing.
 */
export function patternMatches(pattern: string, value: unknown): boolean {
  if (typeof value !== 'string' || value.length > MAX_MATCHED_CLAIM_LENGTH) return false;
  try {
    return compilePattern(pattern).testExact(value);
  } catch {
    return false;
  }
}

/**
 * The literal text every issuer matching `pattern` starts with (or, when `complete`, is),
 * when it fixes the scheme and the host; undefined when it does not.
 *
 * A pattern fixes the issuer's origin when RE2's literal prefix of the pattern (the text
 * every match must begin with, computed on the parsed program, so escapes, `\Q…\E` and
 * single-character classes count as literal and `(?i)` or a leading `^` do not) is either
 * the whole pattern, itself a valid issuer URL, or begins with `scheme://host[:port]/`.
 * That is what makes a pattern safe to use before the token's signature is checked: the
 * STS compares the unverified `iss` with this literal (equality or prefix, never a regex),
 * and only ever fetches discovery from that origin. `https://.*\.example\.com` is refused
 * (the host is open), and so is `https://token.actions.example` (an unescaped `.` matches
 * any character, so the host is not literal).
 */
export function issuerPatternLiteral(
  pattern: string,
  allowInsecure: boolean,
): { literal: string; complete: boolean } | undefined {
  let re: RE2JS;
  try {
    re = compilePattern(pattern);
  } catch {
    return undefined;
  }
  const { prefix, prefixComplete } = re.re2() as { prefix: unknown; prefixComplete: unknown };
  if (typeof prefix !== 'string') return undefined;
  if (prefixComplete === true) {
    return issuerProblem(prefix, allowInsecure) === undefined
      ? { literal: prefix, complete: true }
      : undefined;
  }
  const m = /^(https?):\/\/([^/]+)\//.exec(prefix);
  if (!m) return undefined;
  const [origin, scheme, authority] = m as unknown as [string, string, string];
  if (scheme !== 'https' && !(allowInsecure && scheme === 'http')) return undefined;
  if (!AUTHORITY.test(authority)) return undefined;
  // The whole literal prefix, not just the origin: the tighter the unverified check, the fewer
  // paths on that host a token can make Arbor ask for.
  return issuerProblem(origin, allowInsecure) === undefined
    ? { literal: prefix, complete: false }
    : undefined;
}

/** A DNS name or bracketed IPv6 literal with an optional port: no userinfo, no escapes. */
const AUTHORITY = /^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?$/i;

/** Why `pattern` is unacceptable as an `issuerPattern`, or undefined when it is fine. */
export function issuerPatternProblem(pattern: string, allowInsecure: boolean): string | undefined {
  const why = patternProblem(pattern);
  if (why !== undefined) return why;
  if (issuerPatternLiteral(pattern, allowInsecure) === undefined) {
    const scheme = allowInsecure ? 'https:// (or http://)' : 'https://';
    return (
      `must begin with a literal ${scheme}host/ that fixes the issuer's host ` +
      '(escape dots as \\., and leave out ^ and (?i): patterns match the whole issuer)'
    );
  }
  return undefined;
}
