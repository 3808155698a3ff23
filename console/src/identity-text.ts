import type { ClaimMatch } from './model';

/** The CRD, curl and CLI spellings of one identity, as the builder shows them. Pure. */
export interface IdentityDraft {
  groupUid: string;
  name: string;
  description: string;
  claimMatch: ClaimMatch;
}

/** A YAML scalar that stays a string whatever it holds (JSON strings are YAML). */
const q = (s: string) => JSON.stringify(s);

/** A Kubernetes object name (RFC 1123 label-ish) made from the identity's name. */
export function objectName(name: string): string {
  const n = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63);
  return n || 'identity';
}

export function identityBody(d: IdentityDraft): Record<string, unknown> {
  return {
    name: d.name,
    ...(d.description ? { description: d.description } : {}),
    claimMatch: d.claimMatch,
  };
}

export function identityYaml(d: IdentityDraft): string {
  const lines = [
    'apiVersion: arbor.dev/v1alpha1',
    'kind: Identity',
    'metadata:',
    `  name: ${objectName(d.name)}`,
    'spec:',
    `  groupUid: ${q(d.groupUid)}`,
    `  name: ${q(d.name)}`,
  ];
  if (d.description) lines.push(`  description: ${q(d.description)}`);
  lines.push('  claimMatch:');
  const m = d.claimMatch;
  for (const k of ['issuer', 'issuerPattern', 'subject', 'subjectPattern', 'audience'] as const) {
    const v = m[k];
    if (v) lines.push(`    ${k}: ${q(v)}`);
  }
  const claims = Object.entries(m.claims ?? {});
  if (claims.length > 0) {
    lines.push('    claims:');
    for (const [k, v] of claims) lines.push(`      ${q(k)}: ${q(v)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Single-quoted for a POSIX shell: nothing inside is expanded. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export function identityCurl(d: IdentityDraft, origin: string): string {
  return [
    `curl -X POST ${shellQuote(`${origin}/iam/v2beta1/identities/${d.groupUid}`)} \\`,
    `  -H "Authorization: Bearer $(arbor auth token)" -H 'Content-Type: application/json' \\`,
    `  -d ${shellQuote(JSON.stringify(identityBody(d)))}`,
  ].join('\n');
}

export function identityCli(d: IdentityDraft): string {
  return `echo ${shellQuote(JSON.stringify(identityBody(d)))} | arbor identities create --parent ${shellQuote(d.groupUid)} -f -`;
}

/** `key=value` lines into a claims object; blank lines skipped. */
export function parseClaims(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const i = line.indexOf('=');
    if (line.trim() === '' || i < 1) continue;
    out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}
