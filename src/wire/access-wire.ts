import { z } from 'zod';
import { CAPABILITIES } from '../auth/capabilities.js';
import type {
  CheckResult,
  GrantProof,
  GroupAccess,
  Holder,
  PendingGrant,
} from '../resources/access/access.js';
import type { TokenTestAnswer } from '../resources/sts/token-tester.js';
import { timestampSchema, ts } from './time.js';
import { uidSchema } from './uid-schema.js';

const capability = z.enum(CAPABILITIES);

/**
 * `partial` and `countedFrom`, added to an answer that counts only part of the asked
 * group's path (see `Coverage`); both absent on a whole answer.
 */
export const coverageShape = {
  partial: z
    .literal(true)
    .optional()
    .meta({
      description:
        'Present (true) when the answer may leave out bindings: the caller may not list role ' +
        "bindings at the organization's root, so bindings above `countedFrom` are not counted. " +
        "Decided from the caller's own grants, not from whether anything is left out. Absent: " +
        'the answer counts every binding on the path.',
    }),
  countedFrom: uidSchema.optional().meta({
    description:
      'With `partial`: the topmost group on the path where the caller may list role ' +
      'bindings; bindings at this group and below are counted. Absent with `partial`: only ' +
      "the caller's own bindings are counted.",
  }),
};
/**
 * A path of names beside a uid, for people: absent where the caller may not see what the
 * uid names (see docs/api.md, "Paths in answers").
 */
export const pathField = (what: string) =>
  z
    .string()
    .optional()
    .meta({
      description:
        `${what} as a path of names (\`acme/platform/ci\`), starting where the caller's view ` +
        'of the tree starts; absent where the caller may not see it.',
    });
const roleRef = z
  .object({ uid: uidSchema, name: z.string(), description: z.string() })
  .meta({ description: 'The role; name and description only where the caller may list it.' });

const explainedConditionSchema = z
  .object({
    expression: z.string(),
    title: z.string().optional(),
    description: z.string().optional(),
    result: z.boolean().meta({ description: 'Whether the condition held for this check.' }),
    values: z.record(z.string(), z.unknown()).meta({
      description: 'Each variable the expression read (resource.group.path, …), with its value.',
    }),
    error: z.string().optional().meta({
      description: 'Why it did not evaluate (then result is false), with the position.',
    }),
  })
  .meta({ description: "A conditional binding's condition, evaluated for this check." });

export const grantProofSchema = z
  .object({
    bindingUid: uidSchema,
    role: roleRef,
    groupUid: uidSchema.meta({ description: 'The group the binding is bound at.' }),
    path: z.array(uidSchema).meta({
      description: 'The groups from the bound group down to the asked group, both included.',
    }),
    groupPath: pathField('The group the binding is bound at'),
    rolePath: pathField('The role (a built-in: its name)'),
    condition: explainedConditionSchema.optional(),
  })
  .meta({ description: 'A role binding that grants the asked capability at the asked group.' });

export const heldBindingSchema = z
  .object({
    ...grantProofSchema.shape,
    roleCapabilities: z.array(capability).meta({
      description: 'What the role grants; empty where the caller may not list the role.',
    }),
  })
  .meta({
    description:
      'A role binding the identity holds at the asked group or above that does not grant ' +
      'the asked capability.',
  });

const pendingGrantSchema = z
  .object({
    ...grantProofSchema.shape,
    notBefore: timestampSchema.meta({ description: 'When the binding starts to grant.' }),
    expireTime: timestampSchema
      .optional()
      .meta({ description: 'When it stops granting; absent: never.' }),
  })
  .meta({
    description:
      'A scheduled role binding that has not started: it would grant the asked capability ' +
      'at the asked group from notBefore.',
  });

export const checkResultSchema = z
  .object({
    identityUid: uidSchema,
    identityPath: pathField('The identity'),
    capability,
    groupUid: uidSchema,
    groupPath: pathField('The group'),
    allowed: z.boolean(),
    grants: z.array(grantProofSchema).meta({
      description: 'Every binding that grants it, by binding uid; empty when denied.',
    }),
    nearest: z.array(heldBindingSchema).meta({
      description:
        "When denied, why: the bindings the identity holds on the group's uid path that the " +
        'caller may list (as who-can counts them), nearest the group first, none of which ' +
        'grants the capability. Empty when allowed.',
    }),
    pending: z
      .array(pendingGrantSchema)
      .optional()
      .meta({
        description:
          "The identity's scheduled bindings on the group's uid path that the caller may " +
          'list and that would grant the capability once started (not yet counted), soonest ' +
          'first. Absent when there are none.',
      }),
    conditional: z
      .array(grantProofSchema)
      .optional()
      .meta({
        description:
          'When denied: the conditional bindings the caller may list that hold the capability ' +
          'here but whose condition did not hold for this check (each with its evaluation); ' +
          'they would grant if it held. Absent when there are none.',
      }),
    ...coverageShape,
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
  .object({
    identityUid: uidSchema,
    identityPath: pathField('The identity'),
    grants: z.array(grantProofSchema),
  })
  .meta({ description: 'An identity holding the capability at the group, and why.' });

export const groupAccessSchema = z
  .object({
    groupUid: uidSchema,
    groupPath: pathField('The group'),
    bindings: z.array(
      z.object({ bindingUid: uidSchema, role: roleRef, rolePath: pathField('The role') }),
    ),
    capabilities: z.array(capability).meta({ description: 'What the bindings here grant.' }),
    effectiveCapabilities: z.array(capability).meta({
      description: 'What the identity holds here and everywhere below: these and those inherited.',
    }),
    ...coverageShape,
  })
  .meta({ description: 'What an identity holds at a group it is bound at.' });

const proof = (g: GrantProof) => ({ ...g, role: { ...g.role }, path: [...g.path] });

const pendingGrant = (g: PendingGrant) => ({
  ...proof(g),
  notBefore: ts(g.notBefore),
  ...(g.expireTime ? { expireTime: ts(g.expireTime) } : {}),
});

export function checkResultV2(r: CheckResult): z.output<typeof checkResultSchema> {
  const { pending, ...rest } = r;
  return {
    ...rest,
    grants: r.grants.map(proof),
    nearest: r.nearest.map((h) => ({ ...proof(h), roleCapabilities: [...h.roleCapabilities] })),
    ...(pending ? { pending: pending.map(pendingGrant) } : {}),
  };
}

export function holderV2(h: Holder): z.output<typeof holderSchema> {
  return {
    identityUid: h.identityUid,
    ...(h.identityPath === undefined ? {} : { identityPath: h.identityPath }),
    grants: h.grants.map(proof),
  };
}

export function groupAccessV2(g: GroupAccess): z.output<typeof groupAccessSchema> {
  return { ...g };
}

export const clauseResultSchema = z
  .object({
    clause: z.string().meta({
      description:
        '`issuer`, `subject`, `audience`, `lifetime`, `signature` (only when a token was ' +
        'given) or `claims.<name>` (one per further claim the claim match requires).',
    }),
    passed: z.boolean(),
    reason: z.string().meta({
      description: 'What was expected against what was seen; claim values are truncated.',
    }),
  })
  .meta({ description: 'One clause of the exchange, judged on the token or claims.' });

export const tokenTestResultSchema = z
  .object({
    identityUid: uidSchema
      .optional()
      .meta({ description: 'Absent when testing an unsaved `claimMatch`.' }),
    identityName: z.string().meta({ description: 'Empty for an unsaved `claimMatch`.' }),
    wouldAssume: z.boolean().meta({
      description: 'Whether the exchange would assume this identity: every clause passed.',
    }),
    clauses: z.array(clauseResultSchema),
  })
  .meta({ description: 'Whether a token would assume one identity, and why, clause by clause.' });

export const testTokenResponseSchema = z.object({
  results: z.array(tokenTestResultSchema).meta({
    description:
      'One result for `identityUid` or `claimMatch`; otherwise one per claim-match identity ' +
      'of the page, in uid order.',
  }),
  nextPageToken: z
    .string()
    .optional()
    .meta({ description: 'Testing against all of your identities: the next page, if any.' }),
});

export function testTokenAnswerV2(a: TokenTestAnswer): z.output<typeof testTokenResponseSchema> {
  return {
    results: a.results.map((r) => ({ ...r, clauses: r.clauses.map((c) => ({ ...c })) })),
    ...(a.nextPageToken ? { nextPageToken: a.nextPageToken } : {}),
  };
}
