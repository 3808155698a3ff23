import { z } from 'zod';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../core/list-request.js';
import { isValidUidp } from '../../core/uidp.js';
import { instantSchema } from '../instant-input.js';
import { capabilitiesSchema } from '../roles/role-input.js';
import { MAX_SIMULATED_CHANGES } from './simulate.js';

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
      })
      // An empty window is no binding at all: the real create refuses it the same way.
      .refine((b) => !b.notBefore || !b.expireTime || b.notBefore < b.expireTime, {
        path: ['notBefore'],
        error: 'notBefore must be before expireTime',
      })
      .meta({
        description:
          'A role binding created at groupUid, as RoleBinding create takes it: it grants ' +
          'from notBefore (inclusive; absent or past: at once) until expireTime (exclusive).',
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
