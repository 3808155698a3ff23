import { createHash } from 'node:crypto';
import test from 'ava';
import { CAPABILITIES } from '../../src/auth/capabilities.js';
import { RpcError } from '../../src/core/rpc-error.js';
import { placementViolations } from '../../src/resources/role-bindings/role-binding-input.js';
import {
  BUILTIN_ROLES,
  OWNER_ONLY_LISTS,
  builtinRole,
  builtinRoleUid,
} from '../../src/resources/roles/builtin-roles.js';
import { roleCreateSchema } from '../../src/resources/roles/role-input.js';
import { parseInput } from '../../src/resources/validate.js';

const caps = (name: string) => new Set(builtinRole(name).capabilities);
const subset = (a: Set<string>, b: Set<string>) => [...a].every((c) => b.has(c));

test('built-ins: uids are sha1 of a fixed prefix and the name', (t) => {
  for (const r of BUILTIN_ROLES) {
    t.is(r.uid, createHash('sha1').update(`arbor-builtin-role:${r.name}`).digest('hex'));
  }
  t.is(builtinRoleUid('viewer'), '0f3d50fb7947a7f2870575fc35f7ef3900cf016a');
  t.deepEqual(
    BUILTIN_ROLES.map((r) => r.name),
    ['viewer', 'editor', 'owner', 'registry.pull', 'registry.push'],
  );
});

test('built-ins: viewer ⊂ editor ⊂ owner, pull ⊂ push, and owner holds the catalogue', (t) => {
  const listCaps = CAPABILITIES.filter((c) => c.endsWith('.list') && !OWNER_ONLY_LISTS.includes(c));
  t.false(caps('viewer').has('audit.list'));
  t.true(caps('owner').has('audit.list'));
  t.deepEqual([...caps('viewer')].sort(), [...listCaps, 'repo.blobs.get'].sort());
  t.true(subset(caps('viewer'), caps('editor')));
  t.true(subset(caps('editor'), caps('owner')));
  t.true(caps('editor').has('manifest.delete') && !caps('editor').has('groups.create'));
  t.deepEqual([...caps('owner')].sort(), [...CAPABILITIES].sort());
  t.deepEqual([...caps('registry.pull')].sort(), [
    'groups.list',
    'manifest.list',
    'repo.blobs.get',
    'repo.list',
    'tag.list',
  ]);
  t.true(subset(caps('registry.pull'), caps('registry.push')));
  t.true(caps('registry.push').has('groups.create'));
  t.false(caps('registry.push').has('groups.delete'));
  t.is(builtinRole('registry.push').description, 'Registry Push Role (built-in)');
});

test('role input: capabilities are canonical; empty or unknown names fail on capabilities', (t) => {
  const ok = parseInput(roleCreateSchema, {
    name: 'r',
    capabilities: ['tag.list', 'groups.list', 'tag.list'],
  });
  t.deepEqual(ok.capabilities, ['groups.list', 'tag.list']);
  for (const capabilities of [[], ['nope'], [1], 'groups.list', undefined]) {
    const e = t.throws(() => parseInput(roleCreateSchema, { name: 'r', capabilities }), {
      instanceOf: RpcError,
    });
    t.regex(e!.message, /^Invalid argument: capabilities: /);
  }
});

test('placement: identity in the org or at the root; role at the group or above', (t) => {
  const org = 'a'.repeat(40);
  const team = `${org}/${'1'.repeat(16)}`;
  const deeper = `${team}/${'2'.repeat(16)}`;
  const other = 'b'.repeat(40);
  const builtIn = builtinRoleUid('viewer');
  t.deepEqual(placementViolations(team, `${org}/${'3'.repeat(16)}`, builtIn), []);
  t.deepEqual(placementViolations(team, 'c'.repeat(40), `${org}/${'4'.repeat(16)}`), []);
  t.deepEqual(
    placementViolations(team, `${team}/${'5'.repeat(16)}`, `${team}/${'6'.repeat(16)}`),
    [],
  );
  t.deepEqual(
    placementViolations(team, `${other}/${'3'.repeat(16)}`, `${deeper}/${'7'.repeat(16)}`).map(
      (v) => v.field,
    ),
    ['identityUid', 'roleUid'],
  );
  t.deepEqual(
    placementViolations(team, `${org}/${'3'.repeat(16)}`, `${other}/${'8'.repeat(16)}`).map(
      (v) => v.field,
    ),
    ['roleUid'],
  );
});
