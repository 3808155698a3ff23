import { z } from 'zod';
import { CAPABILITIES } from '../auth/capabilities.js';
import type { CheckResult, GrantProof, GroupAccess, Holder } from '../resources/access/access.js';
import { uidSchema } from './uid-schema.js';

const capability = z.enum(CAPABILITIES);
const roleRef = z
  .object({ uid: uidSchema, name: z.string(), description: z.string() })
  .meta({ description: 'The role; name and description only where the caller may list it.' });

export const grantProofSchema = z
  .object({
    bindingUid: uidSchema,
    role: roleRef,
    groupUid: uidSchema.meta({ description: 'The group the binding is bound at.' }),
    path: z.array(uidSchema).meta({
      description: 'The groups from the bound group down to the asked group, both included.',
    }),
  })
  .meta({ description: 'A role binding that grants the asked capability at the asked group.' });

export const checkResultSchema = z
  .object({
    identityUid: uidSchema,
    capability,
    groupUid: uidSchema,
    allowed: z.boolean(),
    grants: z.array(grantProofSchema).meta({
      description: 'Every binding that grants it, by binding uid; empty when denied.',
    }),
  })
  .meta({
    description:
      'Whether the identity holds the capability at the group, counting only the bindings ' +
      'the caller may list (all of them for the identity itself).',
  });

export const batchCheckResponseSchema = z.object({
  results: z.array(checkResultSchema).meta({ description: 'One answer per check, in order.' }),
});

export const holderSchema = z
  .object({ identityUid: uidSchema, grants: z.array(grantProofSchema) })
  .meta({ description: 'An identity holding the capability at the group, and why.' });

export const groupAccessSchema = z
  .object({
    groupUid: uidSchema,
    bindings: z.array(z.object({ bindingUid: uidSchema, role: roleRef })),
    capabilities: z.array(capability).meta({ description: 'What the bindings here grant.' }),
    effectiveCapabilities: z.array(capability).meta({
      description: 'What the identity holds here and everywhere below: these and those inherited.',
    }),
  })
  .meta({ description: 'What an identity holds at a group it is bound at.' });

const proof = (g: GrantProof) => ({ ...g, role: { ...g.role }, path: [...g.path] });

export function checkResultV2(r: CheckResult): z.output<typeof checkResultSchema> {
  return { ...r, grants: r.grants.map(proof) };
}

export function holderV2(h: Holder): z.output<typeof holderSchema> {
  return { identityUid: h.identityUid, grants: h.grants.map(proof) };
}

export function groupAccessV2(g: GroupAccess): z.output<typeof groupAccessSchema> {
  return { ...g };
}
