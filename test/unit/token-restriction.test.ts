import test from 'ava';
import type { Grant } from '../../src/auth/authorizer.js';
import type { Capability } from '../../src/auth/capabilities.js';
import { restrictGrants } from '../../src/auth/token-restriction.js';

const ORG = 'a'.repeat(40);
const TEAM = `${ORG}/${'1'.repeat(16)}`;
const SUB = `${TEAM}/${'2'.repeat(16)}`;
const BESIDE = `${ORG}/${'3'.repeat(16)}`;
const grant = (scope: string, caps: Capability[]): Grant => ({
  scope,
  capabilities: new Set(caps),
  bindings: [{ uid: `${scope}/b`, capabilities: new Set(caps) }],
});

test('restrictGrants: keeps only the scope asked, in every grant and its bindings', (t) => {
  const out = restrictGrants([grant(ORG, ['groups.list', 'repo.list'])], {
    scope: new Set<Capability>(['repo.list', 'groups.delete']),
  });
  t.is(out.length, 1);
  t.deepEqual([...out[0]!.capabilities], ['repo.list']);
  t.deepEqual([...out[0]!.bindings![0]!.capabilities], ['repo.list']);
});

test('restrictGrants: a grant above a resource holds from it down, one below it stays, one beside it goes', (t) => {
  const out = restrictGrants(
    [grant(ORG, ['groups.list']), grant(SUB, ['repo.list']), grant(BESIDE, ['tag.list'])],
    { resources: [TEAM] },
  );
  t.deepEqual(
    out.map((g) => [g.scope, [...g.capabilities]]),
    [
      [TEAM, ['groups.list']],
      [SUB, ['repo.list']],
    ],
  );
});

test('restrictGrants: a grant with no capability left is dropped, and nothing is ever added', (t) => {
  const grants = [grant(TEAM, ['groups.list'])];
  t.deepEqual(restrictGrants(grants, { scope: new Set<Capability>(['repo.create']) }), []);
  t.deepEqual(restrictGrants(grants, { resources: [BESIDE] }), []);
  const wide = restrictGrants(grants, { resources: [ORG] });
  t.deepEqual(
    wide.map((g) => g.scope),
    [TEAM],
  );
});
