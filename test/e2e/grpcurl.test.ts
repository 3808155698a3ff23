import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { createGroup } from '../helpers/fixtures.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import { ADMIN_TOKEN } from '../helpers/server.js';
import { needTool } from '../helpers/need-tool.js';

/**
 * grpcurl, a client that knows nothing of Arbor, against the combined listener: it lists
 * the services through server reflection and calls one method, with no proto files.
 * The binary comes from scripts/grpcurl/build.sh (run by .ci/run).
 */
const VERSION = 'v1.9.3';
const binary =
  process.env.ARBOR_GRPCURL ??
  join(
    process.env.ARBOR_CACHE ?? join(homedir(), '.cache', 'arbor'),
    'grpcurl',
    VERSION,
    'grpcurl',
  );
const available = existsSync(binary);
const maybe = needTool(
  test.serial,
  'grpcurl',
  available ? undefined : `no ${binary} (run scripts/grpcurl/build.sh)`,
);

const run = promisify(execFile);
let s: GrpcTestServer;

test.before(async () => {
  if (available) s = await startGrpcServer();
});
test.after.always(async () => {
  await s?.close();
});

const grpcurl = (...args: string[]) =>
  run(binary, ['-plaintext', ...args], { timeout: 30_000 }).then((r) => r.stdout);

maybe('grpcurl: lists every service through reflection', async (t) => {
  const listed = (await grpcurl(s.address, 'list')).trim().split('\n').sort();
  for (const name of [
    'arbor.iam.v2beta1.GroupsService',
    'arbor.iam.v2beta1.RoleBindingsService',
    'arbor.registry.v2beta1.TagsService',
    'arbor.vulnerabilities.v2beta1.AdvisoriesService',
    'arbor.sts.v2beta1.SecurityTokenService',
    'grpc.health.v1.Health',
  ]) {
    t.true(listed.includes(name), `${name} in ${listed.join(', ')}`);
  }
  const described = await grpcurl(s.address, 'describe', 'arbor.iam.v2beta1.ListGroupsRequest');
  t.regex(described, /int32 page_size = 10;/);
});

maybe('grpcurl: calls GetGroup with a bearer token and reads the JSON answer', async (t) => {
  const org = await createGroup(s.admin, 'grpcurl-org');
  const out = await grpcurl(
    '-H',
    `authorization: Bearer ${ADMIN_TOKEN}`,
    '-d',
    JSON.stringify({ uid: org }),
    s.address,
    'arbor.iam.v2beta1.GroupsService/GetGroup',
  );
  const got = JSON.parse(out);
  t.is(got.uid, org);
  t.is(got.name, 'grpcurl-org');
  const rest = (await s.admin.get(`/iam/v2beta1/groups/${org}`)).body;
  t.is(new Date(got.createTime).toISOString(), rest.createTime);
});

maybe(
  'grpcurl: an anonymous call is refused with Unauthenticated and the typed details',
  async (t) => {
    const err = await t.throwsAsync(
      grpcurl('-format-error', s.address, 'arbor.iam.v2beta1.GroupsService/ListGroups'),
    );
    const e = err as { stdout?: string; stderr?: string };
    const out = `${e.stdout ?? ''}${e.stderr ?? ''}`;
    t.regex(out, /Unauthenticated/);
    t.regex(out, /google\.rpc\.ErrorInfo/);
  },
);

maybe('grpcurl: the health check answers SERVING', async (t) => {
  const out = await grpcurl(s.address, 'grpc.health.v1.Health/Check');
  t.deepEqual(JSON.parse(out), { status: 'SERVING' });
});
