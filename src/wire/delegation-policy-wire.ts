import { z } from 'zod';
import type { DelegationPolicy } from '../resources/delegation/delegation-policy.js';
import { timestampSchema, ts } from './time.js';
import { uidSchema } from './uid-schema.js';

export const delegationPolicySchema = z
  .object({
    identityUid: uidSchema.meta({ description: 'The identity acted for.' }),
    actors: z.array(uidSchema).meta({ description: 'The identities that may act for it.' }),
    capabilities: z
      .array(z.string())
      .meta({ description: 'At most these capabilities, whatever the identity holds.' }),
    maxLifetimeSeconds: z.int().meta({
      description: 'How long a delegation lasts at most from its start (each token ≤ 1 hour).',
    }),
    setBy: z.string(),
    updateTime: timestampSchema,
  })
  .meta({ description: "An identity's delegation policy (docs/oauth.md, Delegation)." });

export function delegationPolicyV2(p: DelegationPolicy): z.infer<typeof delegationPolicySchema> {
  return { ...p, updateTime: ts(p.updateTime) };
}
