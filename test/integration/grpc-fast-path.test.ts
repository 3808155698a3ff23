import http2 from 'node:http2';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import * as grpc from '@grpc/grpc-js';
import test from 'ava';
import {
  GetGroupRequestSchema,
  GroupSchema,
  GroupsService,
} from '../../src/gen/arbor/iam/v2beta1/groups_pb.js';
import { StatusSchema } from '../../src/gen/google/rpc/status_pb.js';
import type { FastPathStats } from '../../src/grpc/unary-fast-path.js';
import { createGroup } from '../helpers/fixtures.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import { ADMIN_TOKEN } from '../helpers/server.js';

/**
 * The unary fast path (src/grpc/unary-fast-path.ts) serves plain gRPC unary calls; the
 * other protocols, and a call with a deadline, still go through Connect. Each error case
 * is sent twice, once without a deadline (fast path) and once with one (Connect), and must
 * be answered alike.
 */
let s: GrpcTestServer;
let stats: FastPathStats;
let group: string;
let client: grpc.Client;

test.before(async () => {
  s = await startGrpcServer();
  stats = s.fastPath;
  group = await createGroup(s.admin, 'fast-path-org');
  client = new grpc.Client(s.address, grpc.credentials.createInsecure());
});
test.after.always(async () => {
  client?.close();
  await s?.close();
});

interface Raw {
  code: number;
  message?: string;
  status?: string;
  body?: Buffer;
}

/** GetGroup with the request bytes as given; `deadline` sends grpc-timeout (→ Connect). */
function rawGetGroup(bytes: Buffer, opts: { token?: string; deadline?: boolean } = {}) {
  const md = new grpc.Metadata();
  if (opts.token) md.set('authorization', `Bearer ${opts.token}`);
  const options = opts.deadline ? { deadline: Date.now() + 30_000 } : {};
  return new Promise<Raw>((resolve) => {
    client.makeUnaryRequest(
      `/${GroupsService.typeName}/GetGroup`,
      (b: Buffer) => b,
      (b: Buffer) => b,
      bytes,
      md,
      options,
      (err, res) => {
        if (!err) return resolve({ code: 0, body: res });
        const bin = err.metadata?.get('grpc-status-details-bin')[0];
        resolve({
          code: err.code,
          message: err.details,
          // google.rpc.Status as sent: compared byte for byte.
          status: bin instanceof Buffer ? bin.toString('base64') : undefined,
        });
      },
    );
  });
}

const getReq = (uid: string) =>
  Buffer.from(toBinary(GetGroupRequestSchema, create(GetGroupRequestSchema, { uid })));

test.serial('a plain gRPC unary call takes the fast path; with a deadline, Connect', async (t) => {
  const before = stats.served;
  const fast = await rawGetGroup(getReq(group), { token: ADMIN_TOKEN });
  t.is(fast.code, 0);
  t.is(fromBinary(GroupSchema, fast.body!).uid, group);
  t.is(stats.served, before + 1);

  const slow = await rawGetGroup(getReq(group), { token: ADMIN_TOKEN, deadline: true });
  t.is(slow.code, 0);
  t.deepEqual(slow.body, fast.body);
  t.is(stats.served, before + 1);
});

test.serial('the Connect protocol and gRPC-Web still go through Connect', async (t) => {
  const before = stats.served;
  const headers = { authorization: `Bearer ${ADMIN_TOKEN}` };
  for (const transport of [
    createConnectTransport({ baseUrl: s.url, httpVersion: '2' }),
    createConnectTransport({ baseUrl: s.url, httpVersion: '1.1' }),
    createGrpcWebTransport({ baseUrl: s.url, httpVersion: '2' }),
    createGrpcWebTransport({ baseUrl: s.url, httpVersion: '1.1' }),
  ]) {
    const groups = createClient(GroupsService, transport);
    t.is((await groups.getGroup({ uid: group }, { headers })).uid, group);
    const err = await t.throwsAsync(groups.getGroup({ uid: group }));
    t.is(ConnectError.from(err).code, Code.Unauthenticated);
  }
  t.is(stats.served, before);
});

test.serial(
  'unauthenticated, invalid argument: the same code, message and details as through Connect',
  async (t) => {
    const fast = await rawGetGroup(getReq(group));
    const slow = await rawGetGroup(getReq(group), { deadline: true });
    t.is(fast.code, grpc.status.UNAUTHENTICATED);
    const details = fromBinary(StatusSchema, Buffer.from(fast.status!, 'base64')).details;
    t.true(details.some((d) => d.typeUrl.endsWith('google.rpc.ErrorInfo')));
    t.deepEqual(fast, slow);
    const invalid = await rawGetGroup(getReq('not-a-uid'), {
      token: ADMIN_TOKEN,
    });
    t.is(invalid.code, grpc.status.INVALID_ARGUMENT);
    t.deepEqual(
      invalid,
      await rawGetGroup(getReq('not-a-uid'), {
        token: ADMIN_TOKEN,
        deadline: true,
      }),
    );
  },
);

test.serial('garbage bytes: the code and message Connect gives', async (t) => {
  const before = stats.served;
  const garbage = Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]);
  const fast = await rawGetGroup(garbage, { token: ADMIN_TOKEN });
  const slow = await rawGetGroup(garbage, { token: ADMIN_TOKEN, deadline: true });
  t.not(fast.code, 0);
  t.deepEqual(fast, slow);
  t.is(stats.served, before + 1);
});

test.serial('an oversized message is RESOURCE_EXHAUSTED, as through Connect', async (t) => {
  const big = Buffer.alloc(1024 * 1024 + 100, 0x20);
  // A valid GetGroupRequest: field 1 (uid), a string longer than readMaxBytes.
  const bytes = Buffer.from(
    toBinary(GetGroupRequestSchema, create(GetGroupRequestSchema, { uid: big.toString() })),
  );
  const fast = await rawGetGroup(bytes, { token: ADMIN_TOKEN });
  const slow = await rawGetGroup(bytes, { token: ADMIN_TOKEN, deadline: true });
  t.is(fast.code, grpc.status.RESOURCE_EXHAUSTED);
  t.deepEqual(fast, slow);
  // The connection still serves.
  t.is((await rawGetGroup(getReq(group), { token: ADMIN_TOKEN })).code, 0);
});

test.serial(
  'a call the client resets, mid-message or awaiting the answer, harms nothing',
  async (t) => {
    const before = stats.served;
    const session = http2.connect(s.url);
    session.on('error', () => undefined);
    const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), getReq(group)]);
    frame.writeUInt32BE(frame.length - 5, 1);
    const call = () =>
      session.request({
        ':method': 'POST',
        ':path': `/${GroupsService.typeName}/GetGroup`,
        'content-type': 'application/grpc+proto',
        te: 'trailers',
        authorization: `Bearer ${ADMIN_TOKEN}`,
      });
    // A reset with an error code reaches the server's stream as an 'error' event, which
    // would be thrown if nothing there listened.
    const reset = async (stream: http2.ClientHttp2Stream, code: number) => {
      stream.on('error', () => undefined);
      const closed = new Promise((resolve) => stream.once('close', resolve));
      stream.close(code);
      await closed;
    };
    try {
      // Half a frame, then a reset: the server sees an aborted body, no message.
      const half = call();
      half.write(frame.subarray(0, 3));
      await reset(half, http2.constants.NGHTTP2_INTERNAL_ERROR);
      // The whole message, then a reset before the answer can have come.
      const whole = call();
      whole.end(frame);
      await reset(whole, http2.constants.NGHTTP2_PROTOCOL_ERROR);
    } finally {
      session.close();
    }
    t.is(stats.served, before + 2, 'both were taken by the fast path');
    // The process is alive and the port serves.
    t.is((await rawGetGroup(getReq(group), { token: ADMIN_TOKEN })).code, 0);
  },
);

test.serial('Get and List answers are written straight from the wire JSON', async (t) => {
  await createGroup(s.admin, 'fast-path-org-2'); // two roots: a page of 1 has a next page
  const served = stats.served;
  const viaMessage = stats.viaMessage;
  const list = await s.grpcAdmin.call(GroupsService, 'ListGroups', { pageSize: 1 });
  if (!list.ok) return t.fail(`ListGroups: ${list.message}`);
  t.truthy(list.json.nextPageToken);
  t.truthy(list.json.totalCount, 'an int64, a decimal string in the wire JSON');
  t.true((await s.grpcAdmin.call(GroupsService, 'GetGroup', { uid: group })).ok);
  t.is(stats.served, served + 2);
  t.is(stats.viaMessage, viaMessage, 'no answer had to be made into a message first');
});
