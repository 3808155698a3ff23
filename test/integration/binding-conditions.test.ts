import test from 'ava';
import { createGroup } from '../helpers/fixtures.js';
import { asIdentity, createIdentity, createRole, fields, ISSUER } from '../helpers/iam-fixtures.js';
import { runArbor } from '../helpers/cli-run.js';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.js';

/**
 * Conditional role bindings (docs/api.md, "Conditional role bindings"): the expression is
 * checked at create (faults named with their position), and decides each REST decision
 * with the request's time and the resource's group; where a decision has no request
 * context (lists, a service call from no wired door) the conditional binding grants nothing.
 */
let s: TestServer;
let org: string;
let payments: string;
let web: string;
let reader: string;
const B = '/iam/v2beta1/roleBindings';

/** The authorizer's now: held at an instant while `heldAt` is set (a controlled clock). */
let heldAt: number | undefined;
const clock = () => heldAt ?? Date.now();

test.before(async () => {
  s = await startServer({}, { clock });
  org = await createGroup(s.admin, 'cond-org');
  payments = await createGroup(s.admin, 'payments', org);
  web = await createGroup(s.admin, 'web', org);
  reader = await createRole(s.admin, org, 'reader', ['groups.list', 'repo.list']);
});
test.after.always(() => s?.close());

async function bound(name: string, condition?: Record<string, unknown>) {
  const id = await createIdentity(s.admin, org, name);
  const r = await s.admin.post(`${B}/${org}`, {
    identityUid: id,
    roleUid: reader,
    ...(condition ? { condition } : {}),
  });
  if (r.status !== 200) throw new Error(`bind ${name}: ${r.status} ${JSON.stringify(r.body)}`);
  const token = (await s.arbor.tokens.sign(id, { iss: ISSUER, sub: `sub-${name}` })).token;
  return { id, binding: r.body, as: s.client(token) };
}

test.serial(
  'create: a good condition is stored and shown; bad ones name the position',
  async (t) => {
    const { binding } = await bound('good', {
      expression: 'resource.group.path.startsWith("cond-org/")',
      title: 'below the org',
    });
    t.deepEqual(binding.condition, {
      expression: 'resource.group.path.startsWith("cond-org/")',
      title: 'below the org',
    });
    t.deepEqual((await s.admin.get(`${B}/${binding.uid}`)).body.condition, binding.condition);
    const id = await createIdentity(s.admin, org, 'bad');
    const cases: [string, RegExp][] = [
      ['nope == 1', /undeclared reference to 'nope' at position 0/],
      ['request.capability + 1 == 2', /cannot add 'string' and 'int' at position 19/],
      ['resource.group.path', /must be bool.* at position 0/],
      ['resource.owner == ""', /undefined field 'owner' of resource at position 8/],
      ['request.time <', /syntax error.* at position/],
      ['x'.repeat(1001), /at most 1000 characters/],
      [
        Array.from({ length: 12 }, () => 'request.capability.matches("a")').join(' && '),
        /over the limit of 200/,
      ],
    ];
    for (const [expression, why] of cases) {
      const r = await s.admin.post(`${B}/${org}`, {
        identityUid: id,
        roleUid: reader,
        condition: { expression },
      });
      t.is(r.status, 400, expression.slice(0, 40));
      t.deepEqual(fields(r.body), ['condition.expression']);
      t.regex(JSON.stringify(r.body), why, expression.slice(0, 40));
    }
    const moved = await s.admin.patch(`${B}/${binding.uid}?updateMask=condition`, {
      condition: { expression: 'true' },
    });
    t.is(moved.status, 400, 'a condition is set once, at create');
    // The audit record of the create carries the condition.
    const q = `/audit/v2beta1/events?resource_uid=${encodeURIComponent(binding.uid)}`;
    const audit = await s.admin.get(q);
    t.is(audit.status, 200);
    const created = (audit.body.events as { after?: unknown }[]).find((e) => e.after !== undefined);
    t.deepEqual(
      (created?.after as { condition?: unknown } | undefined)?.condition,
      binding.condition,
    );
  },
);

test.serial(
  'time window: grants inside office hours, denies outside (controlled clock)',
  async (t) => {
    const { as } = await bound('office', {
      expression: 'request.time.getHours("UTC") >= 9 && request.time.getHours("UTC") < 17',
    });
    try {
      heldAt = Date.parse('2026-06-01T10:00:00Z');
      t.is((await as.get(`/iam/v2beta1/groups/${payments}`)).status, 200, 'granted at 10:00');
      heldAt = Date.parse('2026-06-01T20:00:00Z');
      t.is((await as.get(`/iam/v2beta1/groups/${payments}`)).status, 404, 'denied at 20:00');
      heldAt = Date.parse('2026-06-02T16:59:59Z');
      t.is((await as.get(`/iam/v2beta1/groups/${payments}`)).status, 200, 'granted at 16:59');
    } finally {
      heldAt = undefined;
    }
  },
);

test.serial('group path prefix: grants below payments only', async (t) => {
  const { as } = await bound('prefix', {
    expression: 'resource.group.path.startsWith("cond-org/payments")',
  });
  t.is((await as.get(`/iam/v2beta1/groups/${payments}`)).status, 200);
  t.is((await as.get(`/iam/v2beta1/groups/${web}`)).status, 404);
  t.is((await as.get(`/iam/v2beta1/groups/${org}`)).status, 404);
});

test.serial(
  'fail closed: a list, and a decision with no request context, grant nothing',
  async (t) => {
    const { id, as } = await bound('closed', { expression: 'true' });
    t.is((await as.get(`/iam/v2beta1/groups/${payments}`)).status, 200, 'REST evaluates it');
    const listed = await as.get(`/iam/v2beta1/groups`);
    t.is(listed.status, 200);
    t.deepEqual(listed.body.groups ?? [], [], 'a list shows nothing through a conditional binding');
    // A service call from no wired door (no `via`): no request context, so no grant.
    await t.throwsAsync(s.arbor.services.groups.get(asIdentity(id), payments));
    t.false(await s.arbor.authz.can(asIdentity(id), 'groups.list', payments));
    t.is(await s.arbor.authz.heldUntil(asIdentity(id), 'groups.list', payments), undefined);
  },
);

test.serial('a condition that errs at runtime denies', async (t) => {
  const { as } = await bound('broken', { expression: 'int(resource.group.path) > 0' });
  t.is((await as.get(`/iam/v2beta1/groups/${payments}`)).status, 404);
});

test.serial(
  'check API: the proof shows the condition, its result and the values read',
  async (t) => {
    const { id } = await bound('checked', {
      expression: 'resource.group.path.startsWith("cond-org/payments")',
      title: 'payments only',
    });
    const yes = await s.admin.post('/iam/v2beta1/access:check', {
      identityUid: id,
      capability: 'groups.list',
      groupUid: payments,
    });
    t.is(yes.status, 200);
    t.true(yes.body.allowed);
    t.like(yes.body.grants[0].condition, {
      expression: 'resource.group.path.startsWith("cond-org/payments")',
      title: 'payments only',
      result: true,
      values: { 'resource.group.path': 'cond-org/payments' },
    });
    const no = await s.admin.post('/iam/v2beta1/access:check', {
      identityUid: id,
      capability: 'groups.list',
      groupUid: web,
    });
    t.is(no.status, 200);
    t.false(no.body.allowed);
    t.is(no.body.grants.length, 0);
    t.like(no.body.conditional?.[0]?.condition, {
      result: false,
      values: { 'resource.group.path': 'cond-org/web' },
    });
  },
);

test.serial('CLI: role-bindings create --condition and --condition-title', async (t) => {
  const id = await createIdentity(s.admin, org, 'cli');
  const arbor = (args: string[]) =>
    runArbor([...args, '--api', s.url], { ARBOR_TOKEN: ADMIN_TOKEN, HOME: '/nonexistent' });
  const base = ['role-bindings', 'create', '--parent', org, '--identity', id, '--role', reader];
  const bad = await arbor([...base, '--condition', 'request.time > 3']);
  t.not(bad.code, 0);
  t.regex(bad.stderr, /condition\.expression.*at position 13/);
  const r = await arbor([
    ...base,
    '--condition',
    'resource.group.path.startsWith("cond-org/web")',
    '--condition-title',
    'web only',
    '-o',
    'json',
  ]);
  t.is(r.code, 0, r.stderr);
  t.deepEqual(JSON.parse(r.stdout).condition, {
    expression: 'resource.group.path.startsWith("cond-org/web")',
    title: 'web only',
  });
});
