import { z } from 'zod';
import { compileCondition, ConditionError } from '../../auth/condition.js';
import { invalidField } from '../../core/rpc-error.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../core/list-request.js';
import { isValidUidp } from '../../core/uidp.js';
import { instantSchema } from '../instant-input.js';
import { delegationSetSchema } from '../delegation/delegation-policy.js';
import { conditionSchema } from '../role-bindings/role-binding-input.js';
import { capabilitiesSchema } from '../roles/role-input.js';
import { MAX_SIMULATED_CHANGES, type AccessChange } from './simulate.js';

const uid = (name: string) =>
  z
    .string({ error: `${name} must be a uid` })
    .refine(isValidUidp, { error: `${name} must be a uid path` })
    .meta({ pattern: '^[0-9a-f]{40}(?:/[0-9a-f]{16})*$' });

// A simulated binding may carry an expiry in the past: it then grants nothing, which is
// what the simulation shows (the real create refuses it; the verdict says so).
const expireTime = instantSchema();

// A scheduled grant, as a binding's create takes it: from this instant (a past one: at once).
const notBefore = instantSchema();

const byUid = (what: string) =>
  z.strictObject({ uid: uid('uid') }).meta({ description: `The ${what} by uid.` });

/** Exactly one kind of change per item. */
const changeSchema = z.union([
  z.strictObject({
    createRoleBinding: z
      .strictObject({
        groupUid: uid('groupUid'),
        identityUid: uid('identityUid'),
        roleUid: uid('roleUid'),
        expireTime: expireTime.optional(),
        notBefore: notBefore.optional(),
        // Checked against the environment by the simulator, as the real create checks it.
        condition: conditionSchema.optional(),
      })
      // An empty window is no binding at all: the real create refuses it the same way.
      .refine((b) => !b.notBefore || !b.expireTime || b.notBefore < b.expireTime, {
        path: ['notBefore'],
        error: 'notBefore must be before expireTime',
      })
      .meta({
        description:
          'A role binding created at groupUid, as RoleBinding create takes it: it grants ' +
          'from notBefore (inclusive; absent or past: at once) until expireTime (exclusive); ' +
          'with a condition, only when it holds (its deltas are conditional ones).',
      }),
  }),
  z.strictObject({ deleteRoleBinding: byUid('role binding deleted') }),
  z.strictObject({
    updateRole: z
      .strictObject({ uid: uid('uid'), capabilities: capabilitiesSchema })
      .meta({ description: "A custom role's capabilities replaced." }),
  }),
  z.strictObject({ deleteIdentity: byUid('identity deleted, with its bindings') }),
  z.strictObject({
    deleteGroup: byUid('group deleted, with everything below it (a cascading delete)'),
  }),
  z.strictObject({
    setDelegationPolicy: delegationSetSchema.meta({
      description:
        "An identity's delegation policy set, as identities:setDelegationPolicy takes it " +
        '(`actors: []` removes it).',
    }),
  }),
]);

export const simulateSchema = z.strictObject({
  changes: z
    .array(changeSchema, { error: 'changes must be an array of changes' })
    .min(1, { error: 'changes must hold at least one change' })
    .max(MAX_SIMULATED_CHANGES, {
      error: `changes may hold at most ${MAX_SIMULATED_CHANGES} changes`,
    })
    .meta({ description: 'Applied in order, each to the world the ones before it left.' }),
  explain: z
    .boolean({ error: 'explain must be a boolean' })
    .optional()
    .meta({
      description:
        "Also answer the proofs: the grants at each delta's group before and after, " +
        'each once with the capabilities it grants there (default false: none).',
    }),
  pageSize: z
    .number({ error: 'pageSize must be a number' })
    .int({ error: 'pageSize must be an integer' })
    .min(0, { error: 'pageSize must not be negative' })
    .optional()
    .meta({
      description:
        `Deltas per page (default ${DEFAULT_PAGE_SIZE}; 0 means the default; larger ` +
        `values are taken as ${MAX_PAGE_SIZE}).`,
    }),
  pageToken: z
    .string()
    .max(4096)
    .optional()
    .meta({ description: 'The nextPageToken of the previous page; bound to the same changes.' }),
});

export type SimulateRequest = z.output<typeof simulateSchema>;

/**
 * A change set's conditions are checked as the real create checks them, before anything
 * is read: the whole set is refused, naming the change and the fault's position.
 * @throws RpcError INVALID_ARGUMENT on `changes.<i>.createRoleBinding.condition.expression`.
 */
export function requireConditionsCompile(changes: readonly AccessChange[]): void {
  for (const [i, c] of changes.entries()) {
    if (!('createRoleBinding' in c) || c.createRoleBinding.condition === undefined) continue;
    try {
      compileCondition(c.createRoleBinding.condition.expression);
    } catch (err) {
      if (err instanceof ConditionError)
        throw invalidField(`changes.${i}.createRoleBinding.condition.expression`, err.message);
      throw err;
    }
  }
}
