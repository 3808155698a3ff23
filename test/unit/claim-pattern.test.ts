import test from 'ava';
import {
  compilePattern,
  estimatedProgramSize,
  issuerPatternLiteral,
  issuerPatternProblem,
  MAX_MATCHED_CLAIM_LENGTH,
  patternMatches,
  patternProblem,
} from '../../src/resources/identities/claim-pattern.js';

test('pattern: matching is anchored to the whole value and cannot be escaped', (t) => {
  t.true(patternMatches('repo:acme/.*', 'repo:acme/app'));
  t.false(patternMatches('repo:acme/.*', 'xrepo:acme/app'));
  t.false(patternMatches('a|b', 'ab'));
  t.true(patternMatches('a|b', 'b'));
  t.false(patternMatches('a)|(b', 'b'), 'a pattern that does not compile accepts nothing');
  t.false(patternMatches('.*', 42), 'only strings match');
});

test('pattern: a catastrophic-backtracking pattern runs in linear time', (t) => {
  // (a+)+b against a run of a's takes a backtracking engine 2^n steps; RE2 takes n.
  const re = compilePattern('(a+)+b');
  const start = performance.now();
  t.false(re.testExact('a'.repeat(100_000)));
  // Generous for a loaded CI box: a backtracking engine would not finish at all.
  t.true(performance.now() - start < 2_000);
});

test('pattern: claims longer than the cap never match, whatever the pattern', (t) => {
  t.true(patternMatches('a*', 'a'.repeat(MAX_MATCHED_CLAIM_LENGTH)));
  t.false(patternMatches('a*', 'a'.repeat(MAX_MATCHED_CLAIM_LENGTH + 1)));
});

test('pattern: what RE2 cannot express is refused with its reason', (t) => {
  t.regex(patternProblem('(a)\\1')!, /RE2.*invalid escape sequence/);
  t.regex(patternProblem('foo(?=bar)')!, /RE2.*unsupported Perl syntax/);
  t.regex(patternProblem('foo(?!bar)')!, /RE2/);
  t.regex(patternProblem('(?<=a)b')!, /RE2/);
  t.regex(patternProblem('a{1001}')!, /RE2.*repeat count/);
  t.is(patternProblem('(?i)repo:acme/[a-z0-9-]+'), undefined);
});

test('pattern: a pattern compiling to a large program is refused as too complex', (t) => {
  t.regex(patternProblem('(?:[\\p{L}\\p{N}]{30}){30}')!, /too complex/);
  t.regex(patternProblem('a{300}')!, /too complex/);
  t.is(patternProblem('[a-z]{200}'), undefined);
});

const literal = (p: string, insecure = false) => issuerPatternLiteral(p, insecure);

test('issuer pattern: the scheme and host must be a literal prefix ending in a slash', (t) => {
  t.deepEqual(literal('https://token\\.actions\\.example\\.com/.*'), {
    literal: 'https://token.actions.example.com/',
    complete: false,
  });
  t.deepEqual(literal('https://oidc\\.example:8443/id/[0-9A-F]{32}'), {
    literal: 'https://oidc.example:8443/id/',
    complete: false,
  });
  t.deepEqual(literal('\\Qhttps://a.example/\\E.*'), {
    literal: 'https://a.example/',
    complete: false,
  });
  t.deepEqual(literal('https://accounts\\.example\\.com'), {
    literal: 'https://accounts.example.com',
    complete: true,
  });
});

test('issuer pattern: an open or unescaped host, ^, (?i) or a foreign scheme is refused', (t) => {
  for (const p of [
    'https://.*',
    'http://.*\\.example\\.com',
    'https://.*\\.example\\.com/.*',
    'https://token.actions.example.com/.*', // an unescaped dot matches any character
    'https://token\\.actions\\..*',
    '^https://a\\.example/.*',
    '(?i)https://a\\.example/.*',
    'https://a\\.example/|https://b\\.example/',
    'https://a\\.example.*', // the host may continue: a.example.attacker.net
    'https://a\\.example:.*',
    'https://user@a\\.example/.*',
    'https://a\\.example\\\\@evil/.*',
    'ftp://a\\.example/.*',
    'https://a\\.example/?x=.*'.replace('/?', '\\?'),
    '.*',
  ]) {
    t.is(literal(p), undefined, p);
    t.regex(issuerPatternProblem(p, false) ?? '', /literal https:\/\/host\//, p);
  }
  t.is(literal('http://a\\.example/.*'), undefined, 'http only with insecure issuers');
  t.truthy(literal('http://a\\.example/.*', true));
  t.is(literal('https://a\\.example?'), undefined, 'a complete literal must be an issuer URL');
});

test('issuer pattern: a bad RE2 pattern reports the RE2 problem first', (t) => {
  t.regex(issuerPatternProblem('https://a\\.example/(', false)!, /RE2/);
  t.is(issuerPatternProblem('https://a\\.example/[a-z]+', false), undefined);
});

test('pattern: a huge counted repetition is refused from its text, before any compile', (t) => {
  // Compiling this would expand to ~490,000 instructions (hundreds of ms on the event loop).
  const huge = `(?:${'x'.repeat(490)}){1000}`;
  t.true(estimatedProgramSize(huge) > 400_000);
  const start = performance.now();
  t.regex(patternProblem(huge)!, /too complex/);
  t.regex(patternProblem(`(?:(?:${'y'.repeat(470)}){16}){62}`)!, /too complex/);
  t.true(performance.now() - start < 1_000, 'refused without compiling');
  // The estimate follows the compiled size closely for ordinary patterns.
  for (const p of [
    'repo:acme/.*:ref:refs/heads/main',
    'https://oidc\\.eks\\.[a-z0-9-]+\\.amazonaws\\.com/id/[0-9A-F]{32}',
    '[[:alpha:]\\]]{200}',
    '\\p{Greek}{100}\\QA.B\\E',
  ]) {
    const real = compilePattern(p).programSize();
    const est = estimatedProgramSize(p);
    t.true(est >= real / 2 && est <= real * 2, `${p}: estimated ${est}, compiled ${real}`);
  }
});
