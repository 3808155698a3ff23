import { z } from 'zod';
import { CAPABILITIES } from '../auth/capabilities.js';
import type {
  DelegationAllowed,
  SimulateAnswer,
  SimulatedGrant,
} from '../resources/access/simulate.js';
import { bindingConditionSchema } from './role-binding-wire.js';
import { timestampSchema, ts } from './time.js';
import { uidSchema } from './uid-schema.js';

const named = (what: string) =>
  z
    .object({
      uid: uidSchema,
      name: z.string(),
      path: z.string().meta({
        description:
          'Its path of names (`acme/platform/ci`), from the top of what the caller may list ' +
          'down to it; empty where it may not list it.',
      }),
    })
    .meta({
      description: `The ${what}; its name and path only where the caller may list it (otherwise empty).`,
    });

export const changeVerdictSchema = z
  .object({
    index: z.number().int().meta({ description: "The change's position in `changes`." }),
    applied: z.boolean().meta({
      description:
        'Whether the change applies, so that the delta counts it. False when it names a ' +
        'group, identity, role or binding that does not exist at that point of the set or ' +
        'that the caller may not list (the two read alike: `reason` is "<kind> not found"); ' +
        'when it updates a built-in role, which exists and may be visible but which no ' +
        'call can update (`reason` "a built-in role cannot be updated"); and when it creates ' +
        'a binding whose identity or role may not be bound at that group (`reason` says ' +
        'why, as the real create refuses it).',
    }),
    permitted: z.boolean().meta({
      description:
        'Whether the caller could make this change itself now: the same capability and ' +
        'no-escalation checks as the real call; always false when not `applied`.',
    }),
    reason: z
      .string()
      .optional()
      .meta({ description: 'Why it is not applied or not permitted; absent when it is both.' }),
  })
  .meta({ description: 'What became of one change of the set.' });

export const simulatedGrantSchema = z
  .object({
    bindingUid: uidSchema
      .optional()
      .meta({ description: 'An existing binding; absent for one the change set creates.' }),
    changeIndex: z
      .number()
      .int()
      .optional()
      .meta({ description: 'The `createRoleBinding` change that creates this binding.' }),
    role: z.object({ uid: uidSchema, name: z.string(), description: z.string() }).meta({
      description: 'The role; name and description only where the caller may list it.',
    }),
    groupUid: uidSchema.meta({ description: 'The group the binding is bound at.' }),
    path: z.array(uidSchema).meta({
      description: "The groups from the bound group down to the delta's group, both included.",
    }),
    expireTime: timestampSchema.optional().meta({
      description: 'From this instant the binding grants nothing; absent: never.',
    }),
    notBefore: timestampSchema.optional().meta({
      description: 'From this instant the binding grants (a scheduled grant); absent: at once.',
    }),
    capabilities: z.array(z.enum(CAPABILITIES)).meta({
      description: "Which of the delta's capabilities this binding grants at the delta's group.",
    }),
    condition: bindingConditionSchema.optional(),
  })
  .meta({ description: "A binding that grants the capability at the delta's group." });

export const accessDeltaSchema = z
  .object({
    identity: named('identity'),
    group: named('group at the top of the subtree where the access changes'),
    effect: z.enum(['GAIN', 'LOSE']),
    capabilities: z.array(z.enum(CAPABILITIES)).meta({
      description: 'The capabilities gained (or lost) there, in order.',
    }),
    before: z.array(simulatedGrantSchema).meta({
      description:
        'With `explain`: the grants at `group` before the change set, each once; empty for ' +
        'a GAIN and without `explain`.',
    }),
    after: z.array(simulatedGrantSchema).meta({
      description:
        'With `explain`: the grants at `group` after the change set, each once; empty for ' +
        'a LOSE and without `explain`.',
    }),
    unchangedBelow: z
      .array(
        z.object({
          groupUid: uidSchema,
          capabilities: z.array(z.enum(CAPABILITIES)),
        }),
      )
      .meta({
        description:
          'Groups strictly below `group` where some of the capabilities do not change, ' +
          'because another grant bound there holds them before and after (the tops only), ' +
          'each with those capabilities.',
      }),
    condition: bindingConditionSchema.optional().meta({
      description:
        'A conditional entry: the capabilities are gained (or lost) only when this ' +
        'condition holds, by conditional bindings (one entry per condition); absent: ' +
        'unconditionally. A conditional binding never counts towards an unconditional ' +
        'entry, nor where the capability is held unconditionally before or after.',
    }),
  })
  .meta({
    description:
      'One identity gaining (or losing) some capabilities at `group` and everywhere below ' +
      'it, except beneath `unchangedBelow`: one entry per identity, group and effect.',
  });

const delegationAllowedSchema = z
  .object({
    capabilities: z.array(z.enum(CAPABILITIES)).meta({
      description:
        "At most these capabilities (a delegated token holds at most the subject's own too).",
    }),
    maxLifetimeSeconds: z.number().int().meta({
      description: 'How long one delegation lasts at most from its start.',
    }),
  })
  .meta({ description: 'What the policy allows the actor.' });

export const delegationDeltaSchema = z
  .object({
    subject: named('identity acted for (whose delegation policy changes)'),
    actor: named('identity that may (or may no longer) act for it'),
    effect: z.enum(['GAIN', 'LOSE', 'CHANGE']).meta({
      description:
        'GAIN: the actor may act for the subject after the set and not before; LOSE the ' +
        'other way round; CHANGE: it may both before and after, with another cap.',
    }),
    before: delegationAllowedSchema.optional().meta({ description: 'Absent for a GAIN.' }),
    after: delegationAllowedSchema.optional().meta({ description: 'Absent for a LOSE.' }),
  })
  .meta({
    description:
      'One actor gaining, losing or keeping with another cap the ability to act for an ' +
      'identity (its delegation policy), shown only for identities whose policy the caller ' +
      'may read (it may list and update them).',
  });

export const simulateResponseSchema = z.object({
  changes: z.array(changeVerdictSchema).meta({ description: 'One verdict per change, in order.' }),
  deltas: z.array(accessDeltaSchema).meta({
    description: 'One page of the delta, by identity uid, group uid and effect.',
  }),
  delegationDeltas: z.array(delegationDeltaSchema).meta({
    description:
      "The page's delegation entries, by subject and actor uid: they come after every " +
      'access entry, in the same pages (`totalCount` counts both).',
  }),
  nextPageToken: z.string().optional().meta({ description: 'The next page, if any.' }),
  totalCount: z
    .string()
    .regex(/^\d+$/)
    .meta({ description: 'How many entries in all (an int64 as a string).' }),
});

const grantV2 = (g: SimulatedGrant): z.output<typeof simulatedGrantSchema> => ({
  ...(g.bindingUid === undefined ? {} : { bindingUid: g.bindingUid }),
  ...(g.changeIndex === undefined ? {} : { changeIndex: g.changeIndex }),
  role: { ...g.role },
  groupUid: g.groupUid,
  path: [...g.path],
  ...(g.expireTime === undefined ? {} : { expireTime: ts(g.expireTime) }),
  ...(g.notBefore === undefined ? {} : { notBefore: ts(g.notBefore) }),
  capabilities: [...g.capabilities],
  ...(g.condition === undefined ? {} : { condition: { ...g.condition } }),
});

const allowedV2 = (a: DelegationAllowed) => ({
  capabilities: [...a.capabilities],
  maxLifetimeSeconds: a.maxLifetimeSeconds,
});

export function simulateAnswerV2(a: SimulateAnswer): z.output<typeof simulateResponseSchema> {
  return {
    changes: a.changes.map((c) => ({ ...c })),
    deltas: a.deltas.map((d) => ({
      identity: { ...d.identity },
      group: { ...d.group },
      effect: d.effect,
      capabilities: [...d.capabilities],
      before: d.before.map(grantV2),
      after: d.after.map(grantV2),
      unchangedBelow: d.unchangedBelow.map((u) => ({
        groupUid: u.groupUid,
        capabilities: [...u.capabilities],
      })),
      ...(d.condition === undefined ? {} : { condition: { ...d.condition } }),
    })),
    delegationDeltas: a.delegationDeltas.map((d) => ({
      subject: { ...d.subject },
      actor: { ...d.actor },
      effect: d.effect,
      ...(d.before === undefined ? {} : { before: allowedV2(d.before) }),
      ...(d.after === undefined ? {} : { after: allowedV2(d.after) }),
    })),
    ...(a.nextPageToken ? { nextPageToken: a.nextPageToken } : {}),
    totalCount: a.totalCount,
  };
}
