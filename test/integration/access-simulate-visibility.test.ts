import test, { type ExecutionContext } from 'ava';
import { ADMIN } from '../../src/auth/principal.js';
import { Code } from '../../src/core/rpc-code.js';
import type { RpcError } from '../../src/core/rpc-error.js';
import { KnexUnitOfWork, kx } from '../../src/db/unit-of-work.js';
import {
  MAX_SIMULATED_BINDINGS,
  MAX_SIMULATED_IDENTITIES,
  type SimulateAnswer,
} from '../../src/resources/access/simulate.js';
import { builtinRoleUid } from '../../src/resources/roles/builtin-roles.js';
import { createGroup } from '../helpers/fixtures.js';
import { asIdentity, createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * access:simulate decides what the caller may see before it reads anything: a change naming
 * a group, role, identity or binding the caller cannot see costs exactly what one naming a
 * missing uid costs (the same statements, the same rows, the same answer), however much
 * hangs below what it names; and the work of one simulation is bounded (identities and
 * bindings read, each statement's time), past which it answers RESOURCE_EXHAUSTED.
 */
let s: TestServer;
let hiddenOrg: string;
let hiddenRole: string;
let hiddenIdentity: string;
let hiddenBinding: string;
let mine: string;
let caller: string;
const SIM = '/iam/v2beta1/access:simulate';
const HIDDEN_IDENTITIES = 60;

test.before(async () => {
  s = await startServer();
  hiddenOrg = await createGroup(s.admin, 'hidden-org');
  const folder = await createGroup(s.admin, 'folder', hiddenOrg);
  hiddenRole = await createRole(s.admin, hiddenOrg, 'reader', ['groups.list', 'repo.list']);
  for (let i = 0; i < HIDDEN_IDENTITIES; i++) {
    const id = await createIdentity(s.admin, i % 2 ? folder : hiddenOrg, `h${i}`);
    const b = await createBinding(s.admin, folder, id, hiddenRole);
    hiddenIdentity ??= id;
    hiddenBinding ??= b;
  }
  // The caller: an identity in an organization of its own, a viewer there and nowhere else.
  mine = await createGroup(s.admin, 'mine');
  caller = await createIdentity(s.admin, mine, 'caller');
  await createBinding(s.admin, mine, caller, builtinRoleUid('viewer'));
});
test.after.always(async () => {
  await s?.close();
});

interface Cost {
  statements: string[];
  rows: number;
  answer: SimulateAnswer;
}

/**
 * One simulation as `caller`, with every statement its snapshot ran and every row those
 * answered (statements of other transactions, such as a budget's, are not its cost).
 */
async function cost(changes: unknown[]): Promise<Cost> {
  const seen: { sql: string; tx?: string }[] = [];
  const rowsByTx = new Map<string, number>();
  const onQuery = (q: { sql: string; __knexTxId?: string }) =>
    seen.push({ sql: q.sql, ...(q.__knexTxId ? { tx: q.__knexTxId } : {}) });
  const onResponse = (r: unknown, q: { __knexTxId?: string }) => {
    const n = (r as { rows?: unknown[] } | undefined)?.rows?.length;
    if (q?.__knexTxId && typeof n === 'number')
      rowsByTx.set(q.__knexTxId, (rowsByTx.get(q.__knexTxId) ?? 0) + n);
  };
  s.db.knex.on('query', onQuery);
  s.db.knex.on('query-response', onResponse);
  try {
    const answer = await s.arbor.services.accessSimulator.simulate(asIdentity(caller), {
      changes,
    });
    const snapshot = seen.find((q) => /^BEGIN .*repeatable read READ ONLY/i.test(q.sql))?.tx;
    if (snapshot === undefined) throw new Error('no snapshot ran');
    const statements = seen.filter((q) => q.tx === snapshot).map((q) => q.sql);
    return { statements, rows: rowsByTx.get(snapshot) ?? 0, answer };
  } finally {
    s.db.knex.off('query', onQuery);
    s.db.knex.off('query-response', onResponse);
  }
}

const missingRoot = 'f'.repeat(40);
const missingBelow = () => `${mine}/00000000000000aa`;

/** Hidden and missing alike: statement for statement, row for row, verdict for verdict. */
async function alike(t: ExecutionContext, hidden: unknown[], missing: unknown[]) {
  await cost(missing); // the caller's grants are read once, before either is measured
  const h = await cost(hidden);
  const m = await cost(missing);
  t.deepEqual(h.statements, m.statements, 'the same statements');
  t.is(h.rows, m.rows, 'the same rows read');
  t.deepEqual(h.answer, m.answer, 'the same answer');
  return h;
}

test.serial('deleteGroup of a hidden organization costs what a missing uid costs', async (t) => {
  const h = await alike(
    t,
    [{ deleteGroup: { uid: hiddenOrg } }],
    [{ deleteGroup: { uid: missingRoot } }],
  );
  t.deepEqual(h.answer.changes, [
    { index: 0, applied: false, permitted: false, reason: 'group not found' },
  ]);
  // A fixed handful of statements, none of them per identity or binding of what is hidden.
  // BEGIN, the timeout, four reads (the last, delegation policies), COMMIT.
  t.true(h.statements.length <= 7, h.statements.join('\n'));
  await alike(t, [{ deleteGroup: { uid: hiddenOrg } }], [{ deleteGroup: { uid: missingBelow() } }]);
});

test.serial(
  'a thousand deleteGroup changes of hidden groups cost what one missing uid costs',
  async (t) => {
    const many = Array.from({ length: 1000 }, () => ({ deleteGroup: { uid: hiddenOrg } }));
    const missing = Array.from({ length: 1000 }, () => ({ deleteGroup: { uid: missingRoot } }));
    const h = await alike(t, many, missing);
    const one = await cost([{ deleteGroup: { uid: missingRoot } }]);
    t.is(
      h.statements.length,
      one.statements.length,
      'one statement per kind of fact, not per change',
    );
  },
);

test.serial('updateRole of a hidden role costs what a missing role costs', async (t) => {
  const h = await alike(
    t,
    [{ updateRole: { uid: hiddenRole, capabilities: ['repo.list'] } }],
    [{ updateRole: { uid: `${mine}/00000000000000ab`, capabilities: ['repo.list'] } }],
  );
  t.deepEqual(h.answer.changes, [
    { index: 0, applied: false, permitted: false, reason: 'role not found' },
  ]);
});

test.serial(
  'a hidden identity, binding or binding target costs what a missing one costs',
  async (t) => {
    await alike(
      t,
      [{ deleteIdentity: { uid: hiddenIdentity } }],
      [{ deleteIdentity: { uid: `${mine}/00000000000000ac` } }],
    );
    await alike(
      t,
      [{ deleteRoleBinding: { uid: hiddenBinding } }],
      [{ deleteRoleBinding: { uid: `${mine}/00000000000000ad` } }],
    );
    await alike(
      t,
      [
        {
          createRoleBinding: {
            groupUid: hiddenOrg,
            identityUid: hiddenIdentity,
            roleUid: hiddenRole,
          },
        },
      ],
      [
        {
          createRoleBinding: {
            groupUid: missingRoot,
            identityUid: `${missingRoot}/00000000000000ae`,
            roleUid: `${missingRoot}/00000000000000af`,
          },
        },
      ],
    );
  },
);

/** `n` identities under `group` (and, with `roles`, bound to each at it), in bulk. */
async function bulk(group: string, n: number, roles: string[] = []): Promise<void> {
  await s.db.knex.raw(
    `INSERT INTO identities (uid, parent_uid, name, claim_match)
     SELECT ? || '/' || lpad(to_hex(i), 16, '0'), ?, 'bulk' || i,
            jsonb_build_object('issuer', 'https://issuer.example.com', 'subject', 'bulk' || i)
       FROM generate_series(1, ?) AS i`,
    [group, group, n],
  );
  for (const [k, role] of roles.entries())
    await s.db.knex.raw(
      `INSERT INTO role_bindings (uid, parent_uid, identity_uid, role_uid)
       SELECT ? || '/' || lpad(to_hex(i + ?), 16, '0'), ?,
              ? || '/' || lpad(to_hex(i), 16, '0'), ?
         FROM generate_series(1, ?) AS i`,
      [group, (k + 1) * 1_000_000, group, group, role, n],
    );
  s.arbor.authz.grantsChanged();
}

test.serial(
  'past the identities one simulation may read: 429 RESOURCE_EXHAUSTED naming it',
  async (t) => {
    const org = await createGroup(s.admin, 'many-identities');
    await bulk(org, MAX_SIMULATED_IDENTITIES + 1);
    const res = await s.admin.post(SIM, { changes: [{ deleteGroup: { uid: org } }] });
    t.is(res.status, 429, JSON.stringify(res.body));
    t.is(res.body.code, Code.RESOURCE_EXHAUSTED);
    t.regex(res.body.message, new RegExp(`more than ${MAX_SIMULATED_IDENTITIES} identities`));
  },
);

test.serial(
  'past the bindings one simulation may read: 429 RESOURCE_EXHAUSTED naming it',
  async (t) => {
    const org = await createGroup(s.admin, 'many-bindings');
    const perIdentity = 5;
    const roles: string[] = [];
    for (let i = 0; i < perIdentity; i++)
      roles.push(await createRole(s.admin, org, `r${i}`, ['repo.list']));
    await bulk(org, Math.ceil((MAX_SIMULATED_BINDINGS + 1) / perIdentity), roles);
    const res = await s.admin.post(SIM, { changes: [{ deleteGroup: { uid: org } }] });
    t.is(res.status, 429, JSON.stringify(res.body));
    t.is(res.body.code, Code.RESOURCE_EXHAUSTED);
    t.regex(res.body.message, new RegExp(`more than ${MAX_SIMULATED_BINDINGS} role bindings`));
    // The same set of an organization the caller cannot see is no more than a missing uid.
    const hidden = await s.arbor.services.accessSimulator
      .simulate(asIdentity(caller), { changes: [{ deleteGroup: { uid: org } }] })
      .then((a) => a.changes[0]?.reason);
    t.is(hidden, 'group not found');
  },
);

test.serial(
  'a snapshot statement past its timeout is RESOURCE_EXHAUSTED (the setting holds on both databases)',
  async (t) => {
    const uow = new KnexUnitOfWork(s.db.knex);
    const shown = await uow.snapshot(
      async (tx) =>
        ((await kx(tx).raw('SHOW statement_timeout')) as { rows: { statement_timeout: string }[] })
          .rows[0]!.statement_timeout,
      { statementTimeoutMs: 250 },
    );
    t.is(shown, '250ms');
    // LOCAL: the pooled connection goes back without it.
    const after = await uow.snapshot(
      async (tx) =>
        ((await kx(tx).raw('SHOW statement_timeout')) as { rows: { statement_timeout: string }[] })
          .rows[0]!.statement_timeout,
    );
    t.not(after, '250ms');
    // PGlite accepts the setting but runs without timers, so only PostgreSQL cancels.
    if (process.env.ARBOR_TEST_DB !== 'postgres') return;
    const err = await t.throwsAsync<RpcError>(
      uow.snapshot((tx) => kx(tx).raw('SELECT pg_sleep(2)'), { statementTimeoutMs: 100 }),
    );
    t.is(err?.code, Code.RESOURCE_EXHAUSTED);
    t.regex(err?.message ?? '', /100 ms/);
  },
);

test.serial(
  'the admin token sees all: a simulation as it still reads only what it names',
  async (t) => {
    const answer = await s.arbor.services.accessSimulator.simulate(ADMIN, {
      changes: [{ deleteIdentity: { uid: hiddenIdentity } }],
    });
    t.deepEqual(answer.changes, [{ index: 0, applied: true, permitted: true }]);
    t.true(answer.deltas.some((d) => d.identity.uid === hiddenIdentity && d.effect === 'LOSE'));
  },
);

test.serial(
  "a hidden identity's delegation policy costs what a missing one's costs: nothing of it shows",
  async (t) => {
    // The hidden identity lets the caller itself act for it: the caller still learns nothing.
    const set = await s.admin.post('/iam/v2beta1/identities:setDelegationPolicy', {
      identityUid: hiddenIdentity,
      actors: [caller],
      capabilities: ['repo.list'],
    });
    t.is(set.status, 200, JSON.stringify(set.body));
    try {
      for (const change of [
        { actors: [] },
        { actors: [caller], capabilities: ['repo.list', 'groups.list'] },
      ]) {
        const h = await alike(
          t,
          [{ setDelegationPolicy: { identityUid: hiddenIdentity, ...change } }],
          [{ setDelegationPolicy: { identityUid: missingBelow(), ...change } }],
        );
        t.deepEqual(h.answer.changes, [
          { index: 0, applied: false, permitted: false, reason: 'identity not found' },
        ]);
        t.deepEqual(h.answer.delegationDeltas, []);
        t.is(h.answer.totalCount, '0');
      }
      // Nor by deleting the hidden identity, or the group it is in.
      const d = await alike(
        t,
        [{ deleteIdentity: { uid: hiddenIdentity } }],
        [{ deleteIdentity: { uid: missingBelow() } }],
      );
      t.deepEqual(d.answer.delegationDeltas, []);
      const g = await alike(
        t,
        [{ deleteGroup: { uid: hiddenOrg } }],
        [{ deleteGroup: { uid: missingRoot } }],
      );
      t.deepEqual(g.answer.delegationDeltas, []);
      // The admin sees the same change as a loss: there was something to hide.
      const admin = await s.arbor.services.accessSimulator.simulate(ADMIN, {
        changes: [{ setDelegationPolicy: { identityUid: hiddenIdentity, actors: [] } }],
      });
      t.deepEqual(
        admin.delegationDeltas.map((x) => [x.subject.uid, x.actor.uid, x.effect]),
        [[hiddenIdentity, caller, 'LOSE']],
      );
    } finally {
      await s.admin.post('/iam/v2beta1/identities:setDelegationPolicy', {
        identityUid: hiddenIdentity,
        actors: [],
      });
    }
  },
);
