import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import test from 'ava';
import { AdvisoriesService } from '../../src/gen/arbor/vulnerabilities/v2beta1/advisories_pb.js';
import { ADMIN_TOKEN } from '../helpers/server.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';

/** The import endpoint of `arbor import-advisories --api`: REST (JSON lines) and gRPC. */

const GOOD = fileURLToPath(new URL('../fixtures/osv', import.meta.url));
const BAD = fileURLToPath(new URL('../fixtures/osv-bad', import.meta.url));

let s: GrpcTestServer;
test.before(async () => {
  s = await startGrpcServer();
});
test.after.always(() => s?.close());

async function filesOf(dir: string) {
  const names = (await readdir(dir, { recursive: true })).filter((n) => n.endsWith('.json'));
  return Promise.all(
    names.sort().map(async (n) => ({ name: n, content: await readFile(join(dir, n), 'utf8') })),
  );
}

async function restImport(dir: string, token = ADMIN_TOKEN) {
  const body = (await filesOf(dir)).map((f) => `${JSON.stringify(f)}\n`).join('');
  const r = await fetch(`${s.url}/vulnerabilities/v2beta1/advisories:import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
    body,
  });
  const text = await r.text();
  return {
    status: r.status,
    text,
    lines:
      r.status === 200
        ? text
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l))
        : [],
  };
}

test.serial(
  'REST import: progress lines, then the summary; nothing for a non-administrator',
  async (t) => {
    const identity = await s.api.GET('/iam/v2beta1/groups'); // any valid call: the server answers
    t.truthy(identity.data);
    const refused = await restImport(GOOD, 'not-a-token-at-all-0123456789');
    t.is(refused.status, 401);
    const r = await restImport(GOOD);
    t.is(r.status, 200, r.text);
    t.deepEqual(r.lines.at(-1), {
      summary: {
        files: 4,
        records: 5,
        created: 5,
        updated: 0,
        unchanged: 0,
        stale: 0,
        duplicates: 0,
      },
    });
    t.true(r.lines.some((l) => l.progress?.phase === 'validate'));
    t.true(r.lines.some((l) => l.progress?.phase === 'write' && l.progress.filesDone === 4));
    const again = await restImport(GOOD);
    t.like(again.lines.at(-1), { summary: { unchanged: 5, created: 0 } });
  },
);

test.serial('REST import: a malformed file imports nothing and names the file', async (t) => {
  const r = await restImport(BAD);
  t.is(r.status, 200);
  const last = r.lines.at(-1);
  t.is(last.error.code, 3);
  t.true(
    last.error.details
      .flatMap((d: any) => d.fieldViolations ?? [])
      .some((v: any) => /^GHSA-.*\.json$/.test(v.field)),
    JSON.stringify(last),
  );
});

test.serial('gRPC import: one message per file, progress then the summary', async (t) => {
  const client = createClient(AdvisoriesService, createGrpcTransport({ baseUrl: s.url }));
  const files = await filesOf(GOOD);
  async function* requests() {
    for (const f of files) {
      yield { name: f.name, content: new TextEncoder().encode(f.content) };
      await Promise.resolve(); // a stream, one file at a time
    }
  }
  const events = [];
  for await (const e of client.importAdvisories(requests(), {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  })) {
    events.push(e.event);
  }
  t.true(events.some((e) => e.case === 'progress'));
  const last = events.at(-1)!;
  t.is(last.case, 'summary');
  t.like(last.value, { files: 4, records: 5 });
  const denied = client.importAdvisories(requests(), {
    headers: { authorization: 'Bearer nope-nope-nope-nope-nope' },
  });
  await t.throwsAsync(
    async () => {
      for await (const _ of denied) void _;
    },
    { message: /unauthenticated|UNAUTHENTICATED|16/i },
  );
});
