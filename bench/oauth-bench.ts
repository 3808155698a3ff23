/**
 * `npm run bench -- --only=oauth [--seconds=3] [--rounds=6] [--concurrency=16]`: two costs of
 * the OAuth doors (docs/oauth.md), each side by side with what it is measured against, in
 * alternating rounds (A, B, B, A, …) so that a busy moment slows both alike; medians of the
 * rounds are compared. One Arbor is composed in this process over PostgreSQL at
 * OAUTH_BENCH_PG_URL (with its change feed) or else embedded PGlite.
 *
 * - `exchange`: the same exchange (a workload's OIDC token for an API token of one
 *   identity) through `POST /sts/exchange` and through the standard token endpoint
 *   `POST /oauth2/token` (RFC 8693), over loopback HTTP/1.1 with kept-alive connections.
 *   Target: the token endpoint costs at most 1.1 × the STS (its rate ≥ 1 / 1.1 of the STS's).
 * - `get`: a Get of a group, authenticating the caller's API token each time, with the
 *   revocation check (what every request does: the token's jtis asked of the revocations,
 *   answered from memory kept current by the change feed, or for a second on PGlite) and
 *   without it (an authenticator given no revocations). At the service, without HTTP: the
 *   transport costs both alike, so this is the larger, more conservative share. Target:
 *   the check costs at most 3 %.
 *
 * The cost budgets are off in both (bench/budgets-bench.ts measures them): a bench must never
 * be refused.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiTokenAuthenticator } from '../src/auth/api-token-authenticator.js';
import type { Principal } from '../src/auth/principal.js';
import type { RevokedTokens } from '../src/auth/revoked-tokens.js';
import type { Arbor } from '../src/compose.js';
import { openDatabase } from '../src/db/connect.js';
import { KnexTokenRevocationStore } from '../src/db/stores/token-revocation-store.js';
import { KnexUnitOfWork } from '../src/db/unit-of-work.js';
import { revokedTokensOf } from '../src/read-caches.js';
import { TestIssuer } from '../test/helpers/oidc-issuer.js';
import { arborOf, seedViewer } from './in-process-ab.js';
import { median } from './load.js';

interface Options {
  seconds: number;
  rounds: number;
  concurrency: number;
  log?: (m: string) => void;
}

const ISSUER = 'http://arbor.bench';
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';

/** Calls per second of `concurrency` closed loops of `call` for `seconds`. */
async function perSecond(
  seconds: number,
  concurrency: number,
  call: () => Promise<void>,
): Promise<number> {
  const until = Date.now() + seconds * 1000;
  let n = 0;
  const loop = async () => {
    while (Date.now() < until) {
      await call();
      n++;
    }
  };
  const t0 = Date.now();
  await Promise.all(Array.from({ length: concurrency }, loop));
  return (n * 1000) / (Date.now() - t0);
}

/** One POST of a form; anything but 200 stops the bench (a refusal is not a cost). */
function poster(url: string, body: string, headers: Record<string, string> = {}) {
  return async () => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body,
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${text.slice(0, 200)}`);
  };
}

/**
 * Alternating rounds of `a` and `b` (a warm-up of each first); @returns their medians per
 * second and b's rate as a share of a's.
 */
async function ab(
  o: Options,
  names: [string, string],
  a: () => Promise<void>,
  b: () => Promise<void>,
): Promise<{ a: number; b: number; share: number }> {
  const log = o.log ?? console.log;
  await perSecond(Math.min(2, o.seconds), o.concurrency, a);
  await perSecond(Math.min(2, o.seconds), o.concurrency, b);
  const rates: [number[], number[]] = [[], []];
  for (let i = 0; i < o.rounds; i++) {
    const order = i % 2 === 0 ? [0, 1] : [1, 0];
    for (const k of order) {
      const r = await perSecond(o.seconds, o.concurrency, k === 0 ? a : b);
      rates[k]!.push(r);
      log(`  round ${i + 1} ${names[k]!.padEnd(24)} ${r.toFixed(0)}/s`);
    }
  }
  const [ma, mb] = [median(rates[0]), median(rates[1])];
  return { a: ma, b: mb, share: mb / ma };
}

/**
 * Nanoseconds one request's revocation check takes (`jtis`: its token's), median of rounds:
 * as ApiTokenAuthenticator asks, the answer known at no wait first, else awaited.
 */
async function checkNanos(
  revoked: RevokedTokens,
  jtis: readonly string[],
  rounds: number,
): Promise<number> {
  const n = 100_000;
  const each: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++)
      for (const jti of jtis) {
        const known = revoked.known?.(jti);
        if (known === true || (known === undefined && (await revoked.isRevoked(jti)))) break;
      }
    each.push(((performance.now() - t0) * 1e6) / n);
  }
  return median(each);
}

export async function benchOAuth(o: Options): Promise<void> {
  const log = o.log ?? console.log;
  const dir = mkdtempSync(join(tmpdir(), 'arbor-bench-oauth-'));
  const url = process.env.OAUTH_BENCH_PG_URL;
  const db = await openDatabase(url ? { url, dataDir: '' } : { dataDir: 'memory://' });
  const issuer = await TestIssuer.start('RS256');
  let arbor: Arbor | undefined;
  const server = createServer();
  try {
    arbor = await arborOf(db, dir, {
      ARBOR_ISSUER_URL: ISSUER,
      ARBOR_ALLOW_INSECURE_ISSUERS: 'true',
      ARBOR_BUDGETS: 'false',
    });
    const { identity, group } = await seedViewer(arbor, 'oauth', 'exchanger');
    await arbor.services.identities.update(
      { kind: 'admin' },
      identity,
      { claimMatch: { issuer: issuer.url, subject: 'bench-workload' } },
      'claimMatch',
    );
    const upstream = await issuer.mint(
      { sub: 'bench-workload', aud: ISSUER },
      { exp: Math.floor(Date.now() / 1000) + 3600 },
    );
    server.on('request', arbor.rest);
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const sts = poster(
      `${base}/sts/exchange`,
      new URLSearchParams({ aud: ISSUER, identity }).toString(),
      { authorization: `Bearer ${upstream}` },
    );
    const standard = poster(
      `${base}/oauth2/token`,
      new URLSearchParams({
        grant_type: EXCHANGE,
        subject_token: upstream,
        subject_token_type: ID_TOKEN,
        identity,
      }).toString(),
    );
    log(`exchange: STS against the token endpoint (${db.kind}, loopback HTTP/1.1)`);
    const ex = await ab(o, ['sts /sts/exchange', 'token /oauth2/token'], sts, standard);
    log(
      `exchange: STS ${ex.a.toFixed(0)}/s, token endpoint ${ex.b.toFixed(0)}/s: the token ` +
        `endpoint costs ${(1 / ex.share).toFixed(3)} × the STS (target ≤ 1.1)`,
    );

    // The Get, authenticated each time as every request is, with and without revocations.
    const uow = new KnexUnitOfWork(db.knex, db.replicas, db.changeFeed);
    const store = new KnexTokenRevocationStore();
    const { revoked, stats } = revokedTokensOf(db, {
      isRevoked: (jti) => uow.read((tx) => store.isRevoked(tx, jti)),
    });
    const checking = new ApiTokenAuthenticator(
      arbor.tokens,
      undefined,
      undefined,
      undefined,
      revoked,
    );
    const trusting = new ApiTokenAuthenticator(arbor.tokens);
    const { token } = await arbor.tokens.sign(identity, { iss: issuer.url, sub: 'bench-workload' });
    const services = arbor.services;
    const get = (auth: ApiTokenAuthenticator) => async () => {
      const p: Principal = await auth.authenticate(token);
      await services.groups.get(p, group);
    };
    // With a change feed, its answers are what is measured: wait until it vouches.
    for (let i = 0; i < 500 && db.changeFeed && !db.changeFeed.fresh(); i++)
      await new Promise((r) => setTimeout(r, 20));
    log(`get: with and without the revocation check (${db.kind}, at the service)`);
    const g = await ab(
      o,
      ['get, revocation checked', 'get, not checked'],
      get(checking),
      get(trusting),
    );
    log(
      `get: checked ${g.a.toFixed(0)}/s, not checked ${g.b.toFixed(0)}/s: the check costs ` +
        `${(100 * (g.b / g.a - 1)).toFixed(1)} % (target ≤ 3 %)`,
    );
    // The check alone, one caller in a tight loop: its cost per request, against the time a
    // request of the unchecked Get takes (one event loop: 1 / its rate), is the same share
    // measured without the rounds' noise, which on a loaded machine exceeds it.
    const jti = (await arbor.tokens.verify(token)).jti!;
    const ns = await checkNanos(revoked, [jti], o.rounds);
    log(
      `get: the check alone ${ns.toFixed(0)} ns a request: ` +
        `${((100 * ns * g.b) / 1e9).toFixed(2)} % of an unchecked Get at the service ` +
        `(revocation answers ${JSON.stringify(stats ?? 'kept one second, no change feed')})`,
    );
    log(
      `(${o.rounds} rounds of ${o.seconds} s each, concurrency ${o.concurrency}, read caches ` +
        `${JSON.stringify(arbor.readCaches)})`,
    );
  } finally {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    await arbor?.close();
    await issuer.stop();
    await db.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}
