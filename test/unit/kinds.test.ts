import test from 'ava';
import { RESOURCE_KINDS } from '../../src/cli/resource-kinds.js';
import { KINDS } from '../../src/features.js';
import { rpcPlural } from '../../src/wire/kinds.js';

/**
 * The CLI is a client and keeps its own table of kinds (loading the server's wire floor
 * would slow every command's start); this holds that table to the one the REST and gRPC
 * doors and the audit presenter read (src/wire/kinds.ts).
 */

/** Kinds the CLI does not drive as `arbor <kinds> …`, and why. */
const NOT_IN_CLI: Readonly<Record<string, string>> = {
  accountAssociations: 'set up by people signing in, not typed',
  accessReviews: 'its own commands: arbor reviews open|list|show|decide|schedule',
};

test("every CLI kind is a descriptor's kind, at its path and with its list array", (t) => {
  for (const c of RESOURCE_KINDS) {
    const k = KINDS.find((x) => x.path === c.path);
    if (!k) {
      t.fail(`arbor ${c.command}: no kind in src/wire/kinds.ts has the path ${c.path}`);
      continue;
    }
    t.is(c.plural, k.plural, `arbor ${c.command}: the List array`);
    t.is(c.rootCreate ?? false, k.createWithoutParent ?? false, `arbor ${c.command}: root create`);
  }
});

test('every descriptor is a CLI kind, or said not to be', (t) => {
  for (const k of KINDS) {
    const inCli = RESOURCE_KINDS.some((c) => c.path === k.path);
    t.not(inCli, k.plural in NOT_IN_CLI, `${k.name}: in the CLI, or in NOT_IN_CLI, not both`);
  }
});

test('descriptors are one per kind: names, paths, types and plurals unique and consistent', (t) => {
  for (const field of ['type', 'name', 'plural', 'path'] as const)
    t.is(new Set(KINDS.map((k) => k[field])).size, KINDS.length, `${field}s are unique`);
  for (const k of KINDS) {
    t.true(k.path.endsWith(`/${k.plural}`), `${k.name}: the path ends in the plural`);
    t.true(k.type.endsWith(`/${k.name}`), `${k.name}: the type ends in the name`);
    t.regex(rpcPlural(k), /^[A-Z][A-Za-z]+s$/, `${k.name}: ListX is a method name`);
  }
});
