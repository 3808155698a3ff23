/**
 * CVSS base scores from vector strings, for deriving an advisory's severity level.
 * v3.0/v3.1 and v2 are computed with the formulas of their specifications (FIRST);
 * v4.0, whose score comes from the specification's macro-vector tables, by
 * ae-cvss-calculator (FIRST's reference calculator ported; it scores, we validate).
 */
import cvssCalculator from 'ae-cvss-calculator';

export type SeverityLevel = 'LOW' | 'MEDIUM' | 'HIGH' | 'CRITICAL';
export const SEVERITY_LEVELS: readonly SeverityLevel[] = ['LOW', 'MEDIUM', 'HIGH', 'CRITICAL'];

type Weights = Readonly<Record<string, Readonly<Record<string, number>>>>;

const V3: Weights = {
  AV: { N: 0.85, A: 0.62, L: 0.55, P: 0.2 },
  AC: { L: 0.77, H: 0.44 },
  PR: { N: 0.85, L: 0.62, H: 0.27 },
  UI: { N: 0.85, R: 0.62 },
  S: { U: 0, C: 1 },
  C: { H: 0.56, L: 0.22, N: 0 },
  I: { H: 0.56, L: 0.22, N: 0 },
  A: { H: 0.56, L: 0.22, N: 0 },
};

const V2: Weights = {
  AV: { L: 0.395, A: 0.646, N: 1.0 },
  AC: { H: 0.35, M: 0.61, L: 0.71 },
  Au: { M: 0.45, S: 0.56, N: 0.704 },
  C: { N: 0, P: 0.275, C: 0.66 },
  I: { N: 0, P: 0.275, C: 0.66 },
  A: { N: 0, P: 0.275, C: 0.66 },
};

/** Split `K:V/K:V…` into base metric values; undefined unless every base metric is valid. */
function metrics(parts: string[], weights: Weights): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const part of parts) {
    const [k, v, ...rest] = part.split(':');
    if (k === undefined || v === undefined || rest.length > 0 || k in out) return undefined;
    out[k] = v;
  }
  for (const [k, allowed] of Object.entries(weights)) {
    const v = out[k];
    if (v === undefined || !(v in allowed)) return undefined;
  }
  return out;
}

/** CVSS v3.1 "Roundup": the smallest one-decimal number ≥ x, free of float noise. */
function roundUp31(x: number): number {
  const i = Math.round(x * 100_000);
  return i % 10_000 === 0 ? i / 100_000 : (Math.floor(i / 10_000) + 1) / 10;
}

/** Base score of a `CVSS:3.0/…` or `CVSS:3.1/…` vector; undefined if it is not one. */
export function cvss3BaseScore(vector: string): number | undefined {
  const [prefix, ...parts] = vector.trim().split('/');
  if (prefix !== 'CVSS:3.0' && prefix !== 'CVSS:3.1') return undefined;
  const m = metrics(parts, V3);
  if (!m) return undefined;
  const w = (k: string) => V3[k]?.[m[k] as string] as number;
  const changed = m.S === 'C';
  let pr = w('PR');
  if (changed && m.PR === 'L') pr = 0.68;
  if (changed && m.PR === 'H') pr = 0.5;
  const iss = 1 - (1 - w('C')) * (1 - w('I')) * (1 - w('A'));
  const impact = changed ? 7.52 * (iss - 0.029) - 3.25 * Math.pow(iss - 0.02, 15) : 6.42 * iss;
  const exploitability = 8.22 * w('AV') * w('AC') * pr * w('UI');
  if (impact <= 0) return 0;
  const raw = Math.min((changed ? 1.08 : 1) * (impact + exploitability), 10);
  return prefix === 'CVSS:3.0' ? Math.ceil(Number((raw * 10).toFixed(6))) / 10 : roundUp31(raw);
}

/** Base score of a CVSS v2 vector (`AV:N/AC:L/Au:N/C:P/I:P/A:P`); undefined if it is not one. */
export function cvss2BaseScore(vector: string): number | undefined {
  const parts = vector
    .trim()
    .replace(/^\(|\)$/g, '')
    .split('/');
  const m = metrics(parts, V2);
  if (!m) return undefined;
  const w = (k: string) => V2[k]?.[m[k] as string] as number;
  const impact = 10.41 * (1 - (1 - w('C')) * (1 - w('I')) * (1 - w('A')));
  const exploitability = 20 * w('AV') * w('AC') * w('Au');
  const f = impact === 0 ? 0 : 1.176;
  return Math.round((0.6 * impact + 0.4 * exploitability - 1.5) * f * 10) / 10;
}

/** The base metrics of CVSS v4.0 and their values (the supplemental and threat ones are optional). */
const V4_BASE: Readonly<Record<string, readonly string[]>> = {
  AV: ['N', 'A', 'L', 'P'],
  AC: ['L', 'H'],
  AT: ['N', 'P'],
  PR: ['N', 'L', 'H'],
  UI: ['N', 'P', 'A'],
  VC: ['H', 'L', 'N'],
  VI: ['H', 'L', 'N'],
  VA: ['H', 'L', 'N'],
  SC: ['H', 'L', 'N'],
  SI: ['H', 'L', 'N'],
  SA: ['H', 'L', 'N'],
};

/**
 * Base score of a `CVSS:4.0/…` vector; undefined unless it starts with the prefix and has
 * every base metric exactly once with a valid value (the calculator itself accepts
 * incomplete vectors, so they are refused here first).
 */
export function cvss4BaseScore(vector: string): number | undefined {
  const [prefix, ...parts] = vector.trim().split('/');
  if (prefix !== 'CVSS:4.0') return undefined;
  const seen = new Map<string, string>();
  for (const part of parts) {
    const [k, v, ...rest] = part.split(':');
    if (!k || !v || rest.length > 0 || seen.has(k)) return undefined;
    seen.set(k, v);
  }
  for (const [k, allowed] of Object.entries(V4_BASE)) {
    if (!allowed.includes(seen.get(k) ?? '')) return undefined;
  }
  try {
    const score = new cvssCalculator.Cvss4P0(vector.trim()).calculateScores().base;
    return typeof score === 'number' && Number.isFinite(score) ? score : undefined;
  } catch {
    return undefined;
  }
}

/** Qualitative rating of a v3/v4 score (0 is "None": no level). */
export function levelOfScore(score: number): SeverityLevel | undefined {
  if (score >= 9) return 'CRITICAL';
  if (score >= 7) return 'HIGH';
  if (score >= 4) return 'MEDIUM';
  if (score > 0) return 'LOW';
  return undefined;
}

/** NVD's v2 rating, which has no CRITICAL. */
export function levelOfV2Score(score: number): SeverityLevel | undefined {
  return score >= 7 ? 'HIGH' : score >= 4 ? 'MEDIUM' : score > 0 ? 'LOW' : undefined;
}

/** A textual severity as databases write it (GitHub's MODERATE, Ubuntu's negligible…). */
export function levelOfText(text: unknown): SeverityLevel | undefined {
  if (typeof text !== 'string') return undefined;
  const t = text.trim().toUpperCase();
  if (t === 'MODERATE' || t === 'MEDIUM') return 'MEDIUM';
  if (t === 'LOW' || t === 'HIGH' || t === 'CRITICAL') return t;
  return undefined;
}
