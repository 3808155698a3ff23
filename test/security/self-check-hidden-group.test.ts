import test from 'ava';
import { AccessService } from '../../src/gen/arbor/iam/v2beta1/access_pb.js';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';

/**
 * An identity asking about itself at a group it cannot list learns
 * nothing of that group's existence. It holds only `repo.list` at a folder: at an existing
 * child, at a uid below the folder that never existed, and at a child since deleted, the
 * check answers alike, from its own binding above (as a Get answers 404 alike), on REST
 * and gRPC, with the read cache on and off, cold and remembered.
 */
interface World {
  s: GrpcTestServer;
  token: string;
  binding: string;
  hidden: Record<'existing' | 'missing' | 'deleted', string>;
}

async function world(readCache: boolean): Promise<World> {
  const s = await startGrpcServer({ ARBOR_READ_CACHE: String(readCache) });
  const org = await createGroup(s.admin, 'hidden-org');
  const folder = await createGroup(s.admin, 'hidden-folder', org);
  const existing = await createGroup(s.admin, 'hidden-child', folder);
  const deleted = await createGroup(s.admin, 'deleted-child', folder);
  if ((await s.admin.delete(`/iam/v2beta1/groups/${deleted}`)).status !== 200)
    throw new Error('delete failed');
  const bob = await createIdentity(s.admin, org, 'bob');
  const lister = await createRole(s.admin, org, 'repo-lister', ['repo.list']);
  const binding = await createBinding(s.admin, folder, bob, lister);
  const token = (await s.arbor.tokens.sign(bob, { iss: ISSUER, sub: 'sub-bob' })).token;
  return {
    s,
    token,
    binding,
    hidden: { existing, missing: `${folder}/00000000deadbeef`, deleted },
  };
}

/** What a check answer says, without the asked uid (which differs by construction). */
function gist(body: any): unknown {
  return {
    allowed: body.allowed === true,
    grants: (body.grants ?? []).map((g: any) => ({ binding: g.bindingUid, at: g.groupUid })),
  };
}

for (const readCache of [true, false]) {
  test(`read cache ${readCache ? 'on' : 'off'}: a self check cannot tell a hidden group from a missing one`, async (t) => {
    const w = await world(readCache);
    try {
      const rest = w.s.client(w.token);
      const grpc = w.s.grpc(w.token);
      const answers = new Map<string, unknown[]>();
      // Several rounds: the first reads the database, later ones may come from memory.
      for (let round = 0; round < 4; round++) {
        for (const [kind, uid] of Object.entries(w.hidden)) {
          t.is((await rest.get(`/iam/v2beta1/groups/${uid}`)).status, 404, kind);
          const one = await rest.post('/iam/v2beta1/access:check', {
            capability: 'repo.list',
            groupUid: uid,
          });
          t.is(one.status, 200, `${kind}: ${JSON.stringify(one.body)}`);
          const batch = await rest.post('/iam/v2beta1/access:batchCheck', {
            checks: [{ capability: 'repo.list', groupUid: uid }],
          });
          t.is(batch.status, 200, `${kind}: ${JSON.stringify(batch.body)}`);
          const viaGrpc = await grpc.call(AccessService, 'CheckAccess', {
            capability: 'repo.list',
            groupUid: uid,
          });
          t.true(viaGrpc.ok, `${kind}: ${JSON.stringify(viaGrpc)}`);
          const got = [one.body, batch.body.results[0], viaGrpc.ok ? viaGrpc.json : {}].map(gist);
          answers.set(kind, [...(answers.get(kind) ?? []), ...got]);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      for (const [kind, got] of answers) {
        for (const g of got) {
          const { allowed, grants } = g as { allowed: boolean; grants: any[] };
          t.like(
            { allowed, binding: grants[0]?.binding },
            { allowed: true, binding: w.binding },
            kind,
          );
          t.deepEqual(g, got[0], `${kind}: every door and round answers the same`);
        }
      }
      t.deepEqual(answers.get('existing')![0], answers.get('missing')![0]);
      t.deepEqual(answers.get('existing')![0], answers.get('deleted')![0]);
    } finally {
      await w.s.close();
    }
  });
}
