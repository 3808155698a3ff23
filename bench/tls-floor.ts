/**
 * `npx tsx bench/tls-floor.ts [--seconds=10] [--clients=16]`: what one new TLS connection
 * per request costs Node itself, with nothing of Arbor in it: a bare `node:https` server
 * (its own process, the same self-signed P-256 certificate the open-loop profile gives
 * Arbor) answers every POST with a fixed body, and 16 clients each open a fresh connection
 * per request (`agent: false`, `Connection: close`: a full handshake, no session resumed),
 * as the profile's STS and registry-token cases do. Prints requests per second and the
 * server's CPU per request from /proc: the ceiling those two cases can reach per vCPU, so
 * that a miss of the open-loop STS target can be told apart from what Node's TLS costs.
 * `--resume`: each new connection resumes an earlier one's TLS session instead (an
 * https.Agent without keep-alive keeps its sessions): the floor of a returning client.
 */
import { fork } from 'node:child_process';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { selfSigned } from '../test/helpers/self-signed.js';
import { procCpuMs } from './load.js';

const args = process.argv.slice(2);
const num = (n: string, d: number) =>
  Number(args.find((a) => a.startsWith(`--${n}=`))?.slice(n.length + 3) ?? d);

if (args.includes('--server')) {
  // The child: key and certificate come from the parent, the port goes back to it.
  const { key, cert } = JSON.parse(process.env.TLS_FLOOR_PEM!) as { key: string; cert: string };
  const body = Buffer.from(JSON.stringify({ accessToken: 'x'.repeat(600), expiresIn: 3600 }));
  const server = https.createServer({ key, cert }, (req, res) => {
    req.resume();
    req.on('end', () =>
      res
        .writeHead(200, { 'content-type': 'application/json', 'content-length': body.length })
        .end(body),
    );
  });
  server.listen(0, '127.0.0.1', () =>
    process.send!({ port: (server.address() as AddressInfo).port }),
  );
} else {
  const seconds = num('seconds', 10);
  const resume = args.includes('--resume');
  // Sessions kept, connections not: every request a new connection that resumes one.
  const agent = resume ? new https.Agent({ keepAlive: false, maxCachedSessions: 100 }) : false;
  let resumed = 0;
  const clients = num('clients', 16);
  const pem = selfSigned();
  if (pem === undefined) throw new Error('needs openssl on PATH');
  const child = fork(new URL(import.meta.url).pathname, ['--server'], {
    env: {
      ...process.env,
      TLS_FLOOR_PEM: JSON.stringify({ key: pem.key.toString(), cert: pem.cert.toString() }),
    },
    execArgv: process.execArgv,
  });
  const port = await new Promise<number>((ok) =>
    child.once('message', (m: { port: number }) => ok(m.port)),
  );
  const cpuMs = () => procCpuMs(child.pid!);
  const one = () =>
    new Promise<void>((ok, fail) => {
      const req = https.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/sts/exchange',
          headers: { connection: 'close', 'content-type': 'application/x-www-form-urlencoded' },
          ca: pem.cert,
          servername: 'localhost',
          agent,
        },
        (res) => {
          if ((res.socket as TLSSocket).isSessionReused()) resumed++;
          res.resume();
          res.on('end', () => ok());
        },
      );
      req.on('error', fail);
      req.end('grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange');
    });
  const run = async (s: number) => {
    const end = performance.now() + s * 1000;
    let n = 0;
    const c0 = cpuMs();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (performance.now() < end) {
          await one();
          n++;
        }
      }),
    );
    const wall = (performance.now() - t0) / 1000;
    return { rps: n / wall, n, cpuMsPerReq: (cpuMs() - c0) / n };
  };
  try {
    await run(2); // warm-up
    resumed = 0;
    const r = await run(seconds);
    const how = resume
      ? `its session resumed (${((100 * resumed) / r.n).toFixed(0)} %)`
      : 'a full handshake';
    console.log(
      `bare node:https ${process.version}, a new TLS connection per request, ${how}, ${clients} clients: ` +
        `${r.rps.toFixed(0)}/s, server CPU ${r.cpuMsPerReq.toFixed(3)} ms/req = ` +
        `${(1000 / r.cpuMsPerReq).toFixed(0)}/s per vCPU`,
    );
  } finally {
    child.kill();
  }
}
