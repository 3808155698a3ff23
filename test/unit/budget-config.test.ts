import test from 'ava';
import { ConfigError, loadConfig } from '../../src/config.js';

test('budgets: on by default, with the documented windows', (t) => {
  const b = loadConfig({}).budgets;
  t.true(b.on);
  t.deepEqual(b.classes.simulate, {
    identity: { points: 600, seconds: 60 },
    organization: { points: 3000, seconds: 60 },
  });
  t.deepEqual(b.classes.access_request.identity, { points: 120, seconds: 60 });
  t.deepEqual(b.classes.sts_exchange.organization, { points: 6000, seconds: 60 });
});

test('budgets: ARBOR_BUDGETS=off and a class set as points/seconds', (t) => {
  t.false(loadConfig({ ARBOR_BUDGETS: 'off' }).budgets.on);
  const b = loadConfig({ ARBOR_BUDGET_AUDIT_READ: '10/5', ARBOR_BUDGET_AUDIT_READ_ORG: '40/3600' });
  t.deepEqual(b.budgets.classes.audit_read, {
    identity: { points: 10, seconds: 5 },
    organization: { points: 40, seconds: 3600 },
  });
});

test('budgets: a malformed window is a configuration error naming the variable', (t) => {
  for (const v of ['10', '10/0', '0/60', '1/86401', '-1/60', '1.5/60', '10 / 60'])
    t.throws(() => loadConfig({ ARBOR_BUDGET_SIMULATE: v }), {
      instanceOf: ConfigError,
      message: /^ARBOR_BUDGET_SIMULATE must be points\/seconds/,
    });
  t.throws(() => loadConfig({ ARBOR_BUDGETS: 'maybe' }), {
    instanceOf: ConfigError,
    message: /^ARBOR_BUDGETS must be on or off/,
  });
});
