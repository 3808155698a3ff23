/**
 * `npx tsx bench/jws-probe.ts [--n=4000]`: what one signature costs an exchange, by who
 * computes it. The STS verifies the workload's token (RS256 here, as Kubernetes signs) and
 * signs an API token (ES256); the API verifies that token on its first use. Each is timed
 * through jose 6 (WebCrypto: a promise, a job and key handling around the signature) and
 * through src/auth/compact-jws.ts (node:crypto's one-shot sign and verify, then jose's own
 * claim validation), as CPU (user + system, every thread of the process) and wall time per
 * operation. Why: the exchange spent more on WebCrypto's wrapping than on its signatures
 * (BENCHMARKS.md, 2026-11-30, morning).
 */
import { generateKeyPairSync } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import { signJwt, verifyJwt } from '../src/auth/compact-jws.js';

const n = Number(process.argv.find((a) => a.startsWith('--n='))?.slice(4) ?? 4000);
const es = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const rs = generateKeyPairSync('rsa', { modulusLength: 2048 });
const now = Math.floor(Date.now() / 1000);
const claims = {
  iss: 'https://issuer.example',
  sub: 'system:serviceaccount:ns:sa',
  aud: 'arbor',
  iat: now,
  exp: now + 3600,
};
const upstream = signJwt({ alg: 'RS256', kid: 'k' }, claims, rs.privateKey);
const apiToken = signJwt({ alg: 'ES256', kid: 'k', typ: 'at+jwt' }, claims, es.privateKey);
const rsOpts = { algorithms: ['RS256'], issuer: claims.iss };
const esOpts = { algorithms: ['ES256'], issuer: claims.iss, typ: 'at+jwt' };

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function time(what: string, op: () => unknown): Promise<void> {
  for (let i = 0; i < Math.min(500, n); i++) await op();
  const c0 = cpuMs();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await op();
  const cpu = ((cpuMs() - c0) / n) * 1000;
  const wall = ((performance.now() - t0) / n) * 1000;
  console.log(
    `${what.padEnd(34)} ${cpu.toFixed(1).padStart(7)} us CPU ${wall.toFixed(1).padStart(7)} us wall`,
  );
}

console.log(`node ${process.version}, ${n} operations each`);
await time('sign ES256, jose', () =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', kid: 'k', typ: 'at+jwt' })
    .sign(es.privateKey),
);
await time('sign ES256, compact-jws', () =>
  signJwt({ alg: 'ES256', kid: 'k', typ: 'at+jwt' }, claims, es.privateKey),
);
await time('verify RS256 (upstream), jose', () => jwtVerify(upstream, rs.publicKey, rsOpts));
await time('verify RS256 (upstream), compact-jws', () => verifyJwt(upstream, rs.publicKey, rsOpts));
await time('verify ES256 (API token), jose', () => jwtVerify(apiToken, es.publicKey, esOpts));
await time('verify ES256 (API token), compact-jws', () =>
  verifyJwt(apiToken, es.publicKey, esOpts),
);
