import type { Capability } from '../../src/auth/capabilities.js';
import type { Principal } from '../../src/auth/principal.js';
import type { ClaimMatch } from '../../src/resources/identities/identity.js';
import { must, type Client } from './server.js';

export const ISSUER = 'https://issuer.example.com';

/** A fresh principal object for an identity (grants are cached per principal object). */
export function asIdentity(uid: string): Principal {
  return { kind: 'identity', uid };
}

/** Create a claim-match identity under `group`; returns its uid. */
export async function createIdentity(
  c: Client,
  group: string,
  name: string,
  claimMatch: ClaimMatch = { issuer: ISSUER, subject: `sub-${name}` },
): Promise<string> {
  const identity = await must(
    `create identity ${name}`,
    c.api.POST('/iam/v2beta1/identities/{uid}', {
      params: { path: { uid: group } },
      body: { name, claimMatch },
    }),
  );
  return identity.uid;
}

/** Create a custom role under `group`; returns its uid. */
export async function createRole(
  c: Client,
  group: string,
  name: string,
  capabilities: string[],
): Promise<string> {
  const role = await must(
    `create role ${name}`,
    c.api.POST('/iam/v2beta1/roles/{uid}', {
      params: { path: { uid: group } },
      // Tests pass names the catalogue may not have; the server is the judge.
      body: { name, capabilities: capabilities as Capability[] },
    }),
  );
  return role.uid;
}

/** Bind `roleUid` to `identityUid` at `group`; returns the binding uid. */
export async function createBinding(
  c: Client,
  group: string,
  identityUid: string,
  roleUid: string,
): Promise<string> {
  const binding = await must(
    'create binding',
    c.api.POST('/iam/v2beta1/roleBindings/{uid}', {
      params: { path: { uid: group } },
      body: { identityUid, roleUid },
    }),
  );
  return binding.uid;
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
