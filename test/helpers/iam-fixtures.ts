import type { Principal } from '../../src/auth/principal.js';
import type { Client } from './server.js';

export const ISSUER = 'https://issuer.example.com';

/** A fresh principal object for an identity (grants are cached per principal object). */
export function asIdentity(uid: string): Principal {
  return { kind: 'identity', uid };
}

async function must(what: string, res: Promise<{ status: number; body: any }>): Promise<any> {
  const r = await res;
  if (r.status !== 200) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Create a claim-match identity under `group`; returns its uid. */
export async function createIdentity(
  c: Client,
  group: string,
  name: string,
  claimMatch: Record<string, unknown> = { issuer: ISSUER, subject: `sub-${name}` },
): Promise<string> {
  const body = await must(
    `create identity ${name}`,
    c.post(`/iam/v2beta1/identities/${group}`, { name, claimMatch }),
  );
  return body.uid as string;
}

/** Create a custom role under `group`; returns its uid. */
export async function createRole(
  c: Client,
  group: string,
  name: string,
  capabilities: string[],
): Promise<string> {
  const body = await must(
    `create role ${name}`,
    c.post(`/iam/v2beta1/roles/${group}`, { name, capabilities }),
  );
  return body.uid as string;
}

/** Bind `roleUid` to `identityUid` at `group`; returns the binding uid. */
export async function createBinding(
  c: Client,
  group: string,
  identityUid: string,
  roleUid: string,
): Promise<string> {
  const body = await must(
    'create binding',
    c.post(`/iam/v2beta1/roleBindings/${group}`, { identityUid, roleUid }),
  );
  return body.uid as string;
}

/** The field violations of an INVALID_ARGUMENT body, as `field: description` strings. */
export function violations(body: any): string[] {
  const bad = (body?.details ?? []).find((d: any) => d['@type']?.endsWith('BadRequest'));
  return (bad?.fieldViolations ?? []).map((v: any) => `${v.field}: ${v.description}`);
}

/** The fields named by an INVALID_ARGUMENT body. */
export function fields(body: any): string[] {
  return violations(body).map((v) => v.slice(0, v.indexOf(': ')));
}
