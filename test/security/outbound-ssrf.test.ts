import test from 'ava';
import { createGroup } from '../helpers/fixtures.js';
import { startServer, type Reply, type TestServer } from '../helpers/server.js';
import { assertRefused, CountingServer, exchangeAt, unsignedToken } from '../helpers/sts.js';

/**
 * The STS fetches discovery documents and key sets from issuers that tenants write into
 * identities. With insecure issuers off (production), it must never connect to a loopback,
 * private or link-local address, however the address is spelled or resolved, and every
 * upstream failure must read the same, so that error messages map nothing.
 */

let strict: TestServer;
let dev: TestServer;
const I = '/iam/v2beta1/identities';
const UNIFORM = "Unavailable: the token issuer's keys could not be obtained";

test.before(async () => {
  [strict, dev] = await Promise.all([
    startServer({ ARBOR_ALLOW_INSECURE_ISSUERS: 'false' }),
    startServer({ ARBOR_ALLOW_INSECURE_ISSUERS: 'true' }),
  ]);
});
test.after.always(async () => {
  await strict?.close();
  await dev?.close();
});

/** Create an identity trusting `issuer` and send it a token naming that issuer. */
async function exchangeFor(s: TestServer, issuer: string): Promise<Reply> {
  const org = await createGroup(s.admin, `ssrf-${Math.random().toString(36).slice(2, 8)}`);
  const created = await s.admin.post(`${I}/${org}`, {
    name: 'internal',
    claimMatch: { issuer, subject: 'x' },
  });
  if (created.status !== 200) throw new Error(JSON.stringify(created.body));
  const aud = s.arbor.config.issuerUrl;
  return exchangeAt(s, unsignedToken({ iss: issuer, sub: 'x', aud }), {
    aud,
    identity: created.body.uid as string,
  });
}

test('outbound: loopback issuers are refused without a connection, however they are spelled', async (t) => {
  const v4 = await CountingServer.start();
  let v6: CountingServer | undefined;
  try {
    v6 = await CountingServer.start(undefined, '::1');
  } catch {
    t.log('no IPv6 loopback on this machine: [::1] is checked by address only');
  }
  try {
    const issuers = [
      `https://127.0.0.1:${v4.port}`,
      `https://localhost:${v4.port}`, // a name that resolves to loopback: checked at connect
      `https://127.1:${v4.port}`, // the URL parser makes this 127.0.0.1
      `https://0x7f000001:${v4.port}`,
      `https://[::ffff:127.0.0.1]:${v4.port}`,
      `https://[::1]:${v6?.port ?? v4.port}`,
      `https://localhost:${v6?.port ?? v4.port}`,
      'https://169.254.169.254',
      'https://10.0.0.1',
      'https://[fd00::1]',
      'https://0.0.0.0',
    ];
    for (const issuer of issuers) {
      const res = await exchangeFor(strict, issuer);
      assertRefused(t, res, 503, 14, issuer);
      t.is(res.body.message, UNIFORM, issuer);
    }
    t.is(v4.connections, 0, 'the IPv4 loopback server saw no connection');
    t.is(v6?.connections ?? 0, 0, 'the IPv6 loopback server saw no connection');
  } finally {
    await v4.stop();
    await v6?.stop();
  }
});

test('outbound: the claim tester says a refused issuer’s keys could not be obtained, and connects nowhere', async (t) => {
  const loopback = await CountingServer.start();
  try {
    const issuer = `https://127.0.0.1:${loopback.port}`;
    const aud = strict.arbor.config.issuerUrl;
    const res = await strict.admin.post('/iam/v2beta1/access:testToken', {
      token: unsignedToken({ iss: issuer, sub: 'x', aud }),
      claimMatch: { issuer, subject: 'x' },
    });
    t.is(res.status, 200, JSON.stringify(res.body));
    const signature = res.body.results[0].clauses.find(
      (c: { clause: string }) => c.clause === 'signature',
    );
    t.like(signature, { passed: false, reason: "the token issuer's keys could not be obtained" });
    t.is(loopback.connections, 0);
  } finally {
    await loopback.stop();
  }
});

test('outbound: refused address, connection refused, 404, bad JSON and a wrong document read the same', async (t) => {
  const closed = await CountingServer.start();
  const closedUrl = closed.url;
  await closed.stop();
  const badJson = await CountingServer.start(() => ({ status: 200, body: '{"issuer": tru' }));
  const notFound = await CountingServer.start();
  const foreign = await CountingServer.start(() => ({
    status: 200,
    body: JSON.stringify({ issuer: 'https://someone-else.example', jwks_uri: 'x' }),
  }));
  const huge = await CountingServer.start(() => ({
    status: 200,
    body: `"${'x'.repeat(300_000)}"`,
  }));
  const redirect = await CountingServer.start(() => ({ status: 302, body: '' }));
  try {
    const answers: Array<[string, Reply]> = [
      ['refused address', await exchangeFor(strict, 'https://127.0.0.1:1')],
      ['connection refused', await exchangeFor(dev, closedUrl)],
      ['bad JSON', await exchangeFor(dev, badJson.url)],
      ['404', await exchangeFor(dev, notFound.url)],
      ['another issuer', await exchangeFor(dev, foreign.url)],
      ['too large', await exchangeFor(dev, huge.url)],
      ['redirect', await exchangeFor(dev, redirect.url)],
      ['no such host', await exchangeFor(strict, 'https://no-such-host.invalid')],
    ];
    const [, reference] = answers[0]!;
    for (const [what, res] of answers) {
      assertRefused(t, res, 503, 14, what);
      t.deepEqual(res.body, reference.body, `${what} reads like a refused address`);
    }
    t.is(badJson.requests, 1, 'the dev server did fetch (insecure issuers allowed)');
    t.is(redirect.requests, 1, 'a redirect is not followed');
  } finally {
    await Promise.all([badJson, notFound, foreign, huge, redirect].map((x) => x.stop()));
  }
});
