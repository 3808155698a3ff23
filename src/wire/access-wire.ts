import { z } from 'zod';
import { CAPABILITIES } from '../auth/capabilities.js';
import type {
  AccessExtras,
  ActingFor,
  CheckResult,
  ConditionalGrant,
  GrantProof,
  GroupAccess,
  Holder,
  HolderDelegation,
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

/** A binding's condition as stored, where nothing evaluates it (who-can, what-can). */
const whenSchema = z
  .object({
    expression: z.string(),
    title: z.string().optional(),
    description: z.string().optional(),
  })
  .meta({
    description:
      "A conditional binding's condition (CEL), not evaluated: the binding grants only on a " +
      'decision where it holds.',
  });

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
    when: whenSchema.optional(),
  })
  .meta({ description: 'A role binding that grants the asked capability at the asked group.' });

const actingForShape = {
  identityUid: uidSchema.meta({ description: 'The subject the delegated token acts for.' }),
  actors: z.array(uidSchema).meta({
    description: 'The identities acting for it (RFC 8693 `act`), the current actor first.',
  }),
  capabilities: z.array(capability).meta({
    description:
      "What the token may use now: its scope narrowed by the chain's delegation policies.",
  }),
};

const actingForDescription =
  'Present when the caller is a delegated token ("as actor for subject"): the subject, the ' +
  'actor chain and what the token may use now. Absent for any other caller.';

export const actingForSchema = z.object(actingForShape).meta({ description: actingForDescription });

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
    actingFor: z
      .object({
        ...actingForShape,
        capabilityInScope: z.boolean().meta({
          description:
            'Whether the asked capability is among `capabilities`: an allowed answer with ' +
            'this false is held by the subject but not usable through this token.',
        }),
      })
      .optional()
      .meta({ description: actingForDescription }),
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

export const holderDelegationSchema = z
  .object({
    identityUid: uidSchema.meta({ description: 'The holder whose delegation policy this is.' }),
    actors: z.array(uidSchema).meta({ description: 'The identities that may act for it.' }),
    capabilities: z.array(capability).meta({
      description: 'What a delegated token may hold at most (the asked capability among them).',
    }),
    maxLifetimeSeconds: z.int().meta({ description: 'How long a delegation lasts at most.' }),
  })
  .meta({
    description:
      "A holder's delegation policy: identities that may act for it with the asked capability.",
  });

/** Who-can's fields beside its page (each absent when there is nothing to say). */
export const whoCanExtrasShape = {
  conditionalHolders: z
    .array(holderSchema)
    .optional()
    .meta({
      description:
        'First page only: the identities holding the capability at the group only by ' +
        'conditional bindings the caller may list (each grant with its condition, `when`), ' +
        'by uid, at most 100. Not holders: not in `identities` nor `totalCount`.',
    }),
  conditionalHoldersTruncated: z
    .literal(true)
    .optional()
    .meta({ description: 'Present (true) when there are more than `conditionalHolders` shows.' }),
  delegations: z
    .array(holderDelegationSchema)
    .optional()
    .meta({
      description:
        "The delegation policies of this page's holders (and conditional holders) whose " +
        'capabilities include the asked one, where the caller may read the policy ' +
        '(`identity.update` on the holder). Absent when none.',
    }),
};

/** What-can's field beside its page. */
export const whatCanExtrasShape = {
  actingFor: actingForSchema.optional(),
};

/** Who-can's and what-can's extras as the wire has them (proto3 JSON, REST alike). */
export function accessExtrasV2(x: AccessExtras): Record<string, unknown> {
  return {
    ...(x.conditionalHolders ? { conditionalHolders: x.conditionalHolders.map(holderV2) } : {}),
    ...(x.conditionalHoldersTruncated ? { conditionalHoldersTruncated: true } : {}),
    ...(x.delegations ? { delegations: x.delegations.map(delegationV2) } : {}),
    ...(x.actingFor ? { actingFor: actingForV2(x.actingFor) } : {}),
  };
}

const delegationV2 = (d: HolderDelegation) => ({
  identityUid: d.identityUid,
  actors: [...d.actors],
  capabilities: [...d.capabilities],
  maxLifetimeSeconds: d.maxLifetimeSeconds,
});

const actingForV2 = (a: ActingFor) => ({
  identityUid: a.identityUid,
  actors: [...a.actors],
  capabilities: [...a.capabilities],
});

export const groupAccessSchema = z
  .object({
    groupUid: uidSchema,
    groupPath: pathField('The group'),
    bindings: z
      .array(z.object({ bindingUid: uidSchema, role: roleRef, rolePath: pathField('The role') }))
      .meta({ description: 'The unconditional bindings here (conditional ones: `conditional`).' }),
    capabilities: z.array(capability).meta({
      description: 'What the bindings here grant (unconditional bindings only).',
    }),
    effectiveCapabilities: z.array(capability).meta({
      description:
        'What the identity holds here and everywhere below: these and those inherited ' +
        '(unconditional bindings only).',
    }),
    conditional: z
      .array(
        z.object({
          bindingUid: uidSchema,
          role: roleRef,
          rolePath: pathField('The role'),
          when: whenSchema,
          capabilities: z.array(capability).meta({
            description: 'What it grants (here and below) on a decision where `when` holds.',
          }),
        }),
      )
      .optional()
      .meta({
        description:
          'The conditional bindings here, apart from `bindings`: none of what they grant is ' +
          'in `capabilities` or `effectiveCapabilities`. Absent when there are none.',
      }),
    ...coverageShape,
  })
  .meta({ description: 'What an identity holds at a group it is bound at.' });

const proof = (g: GrantProof) => ({
  ...g,
  role: { ...g.role },
  path: [...g.path],
  ...(g.condition ? { condition: { ...g.condition, values: { ...g.condition.values } } } : {}),
  ...(g.when ? { when: { ...g.when } } : {}),
});

const pendingGrant = (g: PendingGrant) => ({
  ...proof(g),
  notBefore: ts(g.notBefore),
  ...(g.expireTime ? { expireTime: ts(g.expireTime) } : {}),
});

export function checkResultV2(r: CheckResult): z.output<typeof checkResultSchema> {
  const { pending, conditional, actingFor, ...rest } = r;
  return {
    ...rest,
    grants: r.grants.map(proof),
    nearest: r.nearest.map((h) => ({ ...proof(h), roleCapabilities: [...h.roleCapabilities] })),
    ...(pending ? { pending: pending.map(pendingGrant) } : {}),
    ...(conditional ? { conditional: conditional.map(proof) } : {}),
    ...(actingFor
      ? { actingFor: { ...actingForV2(actingFor), capabilityInScope: actingFor.capabilityInScope } }
      : {}),
  };
}

export function holderV2(h: Holder): z.output<typeof holderSchema> {
  return {
    identityUid: h.identityUid,
    ...(h.identityPath === undefined ? {} : { identityPath: h.identityPath }),
    grants: h.grants.map(proof),
  };
}

const conditionalGrantV2 = (c: ConditionalGrant) => ({
  ...c,
  role: { ...c.role },
  when: { ...c.when },
  capabilities: [...c.capabilities],
});

export function groupAccessV2(g: GroupAccess): z.output<typeof groupAccessSchema> {
  const { conditional, ...rest } = g;
  return { ...rest, ...(conditional ? { conditional: conditional.map(conditionalGrantV2) } : {}) };
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
