import cluster from 'node:cluster';
import { existsSync } from 'node:fs';
import type { RequestListener } from 'node:http';
import { join } from 'node:path';
import type { AddressInfo, Server } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { answerClientErrors } from '../api/client-errors.js';
import { defaultConsoleDir } from '../api/console-static.js';
import { SignInToken } from '../auth/sign-in-token.js';
import { ArborListener, createArborHandler } from '../grpc/listener.js';
import type { NodeHandlerFn } from '../grpc/grpc-handler.js';
import { Lifecycle } from '../api/lifecycle.js';
import { compose, createLogger, type Arbor, type ComposeOptions } from '../compose.js';
import { loadConfig, type Config } from '../config.js';
import { checkDataDir } from '../data-dir.js';
import { lockDataDir } from '../db/data-dir-lock.js';
import { ApiMetrics } from '../metrics/api-metrics.js';
import { startMetricsServer } from '../metrics/metrics-server.js';
import { databaseFailure, listenFailure } from '../startup-error.js';
import { readTlsFiles, reloadTls } from '../tls-files.js';
import { TicketKeyRing, rotateTicketKeys, ticketKeySource } from '../tls-ticket-keys.js';
import { outputDrained, writeOutput } from '../stdio-output.js';
import { startTracing, type StopTracing } from '../tracing/start-tracing.js';
import { packageVersion } from './package-version.js';
import { removeSignInFile, signInLine, writeSignInFile } from './sign-in-line.js';

/** Where a command on this machine reaches the server (a wildcard host is loopback here). */
function localUrl(server: Server, host: string, tls: boolean): string {
  const { port } = server.address() as AddressInfo;
  const h = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  return `${tls ? 'https' : 'http'}://${h.includes(':') ? `[${h}]` : h}:${port}`;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const failed = (e: Error) => reject(listenFailure(e, 'PORT', port, host));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve();
    });
  });
}

/**
 * `arbor serve`: the API, the STS and OIDC discovery on one port: cleartext, or TLS when
 * ARBOR_TLS_CERT_FILE/KEY_FILE are set (then reloaded on SIGHUP and when the files change).
 *
 * The port is bound before migrations run, so the probes answer while they do (see
 * Lifecycle). On SIGTERM or SIGINT: `/readyz` fails at once, requests are still served for
 * ARBOR_SHUTDOWN_DELAY_SECONDS (in a pod, endpoints take a moment to drop it; 0 elsewhere,
 * so Ctrl-C stops at once), then the listener closes and in-flight requests get
 * ARBOR_SHUTDOWN_TIMEOUT_SECONDS to finish. A second signal exits at once.
 *
 * In a development run (config.ts `devSignIn`) it makes a sign-in token for this run and
 * prints one line for the person at the terminal (the console's address with the token,
 * and what the CLI needs), or writes it to a 0600 file in DATA_DIR when stdout is no
 * terminal.
 * @throws ConfigError on a bad environment or TLS file; StartupError for a port in use or a
 * database out of reach; whatever migrations throw.
 */
export async function serveCommand(
  opts: ComposeOptions = {},
  prepared?: Promise<void>,
  onServing?: () => void,
  sharedTickets?: TicketKeyRing,
): Promise<void> {
  const config = loadConfig();
  // Before anything uses it (keys, the lock, PGlite): an odd DATA_DIR is one clear line.
  checkDataDir(config.dataDir);
  const logger = opts.logger ?? createLogger(config.logLevel, config.logFormat);
  // Before anything is composed: the doors install their tracing hooks only when it is on.
  const tracing = await startTracing(packageVersion());
  if (tracing) logger.info({ exporter: process.env.OTEL_TRACES_EXPORTER }, 'tracing on');
  const life = new Lifecycle();
  // Read before the port is bound: a bad file stops the process rather than serving without.
  const tls = config.tls ? readTlsFiles(config.tls) : undefined;
  // A cluster worker's come from the primary; one process rotates its own (never written).
  const tickets = tls ? (sharedTickets ?? ownTicketKeys(config)) : undefined;
  // PGlite: take the data directory before binding the port, so a second server refuses
  // with the owner's pid and touches nothing (db/data-dir-lock.ts).
  const lock =
    config.databaseUrl === undefined ? lockDataDir(config.dataDir, { role: 'server' }) : undefined;
  // One port for REST (HTTP/1.1) and gRPC (HTTP/2), with the lifecycle in front of both.
  const server = new ArborListener(life.listener as unknown as NodeHandlerFn, {
    limits: config.http,
    ...(tls ? { tls } : {}),
    ...(tickets
      ? { tickets: { ring: tickets, lifetimeSeconds: config.tlsTickets.rotationMs / 1000 } }
      : {}),
  });
  if (tickets && !tickets.graceful)
    logger.warn(
      'this Node has no TLS ticket key callback: tickets resume until the next key rotation only',
    );
  answerClientErrors(server.http1);
  // Keep-alive sockets would hold shutdown open; bound how long they may idle.
  server.keepAliveTimeout = 5_000;
  try {
    await listen(server, config.port, config.host);
  } catch (e) {
    lock?.release();
    throw e;
  }
  lock?.setApiUrl(localUrl(server, config.host, tls !== undefined));
  // Both ports are bound before "listening" is said: a taken METRICS_PORT stops start-up
  // with its name, not after the process has claimed to serve.
  const metrics = new ApiMetrics(true, tracing !== undefined);
  const metricsServer = await metricsPort(config, metrics, () => {
    server.close();
    lock?.release();
  });
  // Kept until the process exits: a SIGHUP while draining must not kill it either.
  if (config.tls) reloadTls(server, config.tls, logger);
  logger.info(
    {
      port: config.port,
      tls: tls ? { fingerprint: tls.fingerprint, notAfter: tls.notAfter.toISOString() } : false,
    },
    'listening; applying migrations before serving',
  );

  // Migrations run inside compose(); the probes answer meanwhile.
  // In a cluster worker, compose (migrate: false) only once the primary has migrated.
  const signIn = config.devSignIn ? SignInToken.generate() : undefined;
  const started: Promise<Arbor> = (prepared ?? Promise.resolve()).then(() =>
    compose(config, {
      ...opts,
      logger,
      metrics,
      ...(lock ? { dataDirLock: lock } : {}),
      ...(signIn ? { signInToken: signIn } : {}),
    }).catch((e: unknown) => {
      throw databaseFailure(e, config.databaseUrl);
    }),
  );
  const stop = stopOnSignal({
    config,
    logger,
    life,
    server,
    started,
    lock,
    metricsServer,
    tracing,
  });
  process.on('SIGTERM', () => void stop('SIGTERM'));
  // A cluster worker gets the terminal's Ctrl-C and then its primary's SIGTERM for the same
  // stop: it heeds only the primary, which owns the stop (and a second Ctrl-C).
  process.on('SIGINT', () => void (cluster.isWorker ? undefined : stop('SIGINT')));

  const arbor = await started.catch((e: unknown) => {
    lock?.release();
    throw e;
  });
  const handler = createArborHandler(arbor);
  life.serve(handler as unknown as RequestListener);
  // The gRPC door's raw stream path joins only now: until the app serves, every stream
  // reaches the lifecycle, which answers 503.
  server.streams = handler.tryStream;
  onServing?.();
  startServing(arbor, config, logger, localUrl(server, config.host, tls !== undefined), signIn);
}

/**
 * A single process's ticket keys: rotated on its own clock (src/tls-ticket-keys.ts).
 * @throws ConfigError for a bad ARBOR_TLS_TICKET_KEY_FILE.
 */
function ownTicketKeys(config: Readonly<Config>): TicketKeyRing {
  const ring = new TicketKeyRing();
  rotateTicketKeys(ticketKeySource(config.tlsTickets), (set) => ring.set(set));
  return ring;
}

/** What a shutdown lets go of, in order. */
interface Stoppable {
  config: Config;
  logger: Logger;
  life: Lifecycle;
  server: ArborListener;
  started: Promise<Arbor>;
  lock: ReturnType<typeof lockDataDir> | undefined;
  metricsServer: { close(): unknown } | undefined;
  tracing: StopTracing | undefined;
}

/** Past the drain delay and the in-flight timeout, what closing the rest may take. */
const STOP_GRACE_MS = 10_000;
/** How long the last log lines may take to leave before the exit stops waiting for them. */
const OUTPUT_GRACE_MS = 1_000;

/**
 * The signal handler: drain, wait the shutdown delay, close the listener and let in-flight
 * requests finish. Any second signal (SIGTERM or SIGINT) means now: no more waiting. Once
 * start-up is over the whole stop has a deadline (delay + timeout + {@link STOP_GRACE_MS})
 * past which the process exits 1 whatever is still pending: nothing it waits on (a closing
 * database, a collector, a reader of its output) can hold it, nor its data directory.
 */
function stopOnSignal(s: Stoppable): (signal: string) => Promise<void> {
  const { config, logger, life, server, lock } = s;
  let stopping: string | undefined;
  const exitNow = (code: number, why: string, fields: object) => {
    // The logger cannot throw (stdio-output.ts); the exit must not depend on it anyway.
    try {
      logger.warn(fields, why);
    } finally {
      if (config.devSignIn) removeSignInFile(config.dataDir);
      lock?.release();
      process.exit(code);
    }
  };
  return async (signal: string) => {
    if (stopping !== undefined) {
      exitNow(1, 'second signal: exiting now', { signal, first: stopping });
      return;
    }
    stopping = signal;
    life.drain();
    logger.info(
      { signal, delayMs: config.shutdownDelayMs },
      config.shutdownDelayMs > 0
        ? 'shutting down: /readyz fails; still serving until endpoints drop this pod'
        : 'shutting down: finishing in-flight requests (a second signal exits at once)',
    );
    // A half-applied migration is rolled back by the database, but an embedded one must
    // not be cut off mid-write: let startup finish first.
    const arbor = await s.started.catch(() => undefined);
    const deadlineMs = config.shutdownDelayMs + config.shutdownTimeoutMs + STOP_GRACE_MS;
    setTimeout(
      () => exitNow(1, 'the stop passed its deadline: exiting now', { deadlineMs }),
      deadlineMs,
    );
    await sleep(config.shutdownDelayMs);
    logger.info('closing the listener: finishing in-flight requests');
    const force = setTimeout(() => {
      logger.warn({ timeoutMs: config.shutdownTimeoutMs }, 'in-flight requests did not finish');
      server.closeAllConnections();
    }, config.shutdownTimeoutMs);
    force.unref();
    await new Promise<void>((r) => {
      server.close(() => r());
      server.closeIdleConnections();
    });
    s.metricsServer?.close();
    await arbor?.close();
    if (config.devSignIn) removeSignInFile(config.dataDir);
    lock?.release();
    // The last spans (the shutdown's own requests) reach the collector before the exit.
    await s.tracing?.().catch(() => undefined);
    logger.info('stopped');
    // On a pipe the last lines may still be queued: a moment for them, never more.
    await new Promise((r) => setImmediate(r));
    await outputDrained(process.stdout, OUTPUT_GRACE_MS);
    process.exit(0);
  };
}

/** The metrics listener on METRICS_PORT (none for 0); `undo` runs before a failure is thrown. */
async function metricsPort(
  config: Config,
  metrics: ApiMetrics,
  undo: () => void,
): Promise<Awaited<ReturnType<typeof startMetricsServer>> | undefined> {
  if (config.metricsPort <= 0) return undefined;
  return startMetricsServer(metrics.registry, config.metricsPort, config.host).catch(
    (e: unknown) => {
      undo();
      throw e;
    },
  );
}

/** Once the app serves: the background workers start, and the process says it is serving. */
function startServing(
  arbor: Arbor,
  config: Config,
  logger: Logger,
  url: string,
  signIn: SignInToken | undefined,
): void {
  // Event delivery runs in every replica; leases make each subscription one sender's at a time.
  arbor.delivery.start();
  // Every replica sweeps expired bindings; each locks its batch and skips the others'.
  arbor.bindingSweeper.start();
  // Every process writes its own last-used times, through its primary pool (never a replica).
  arbor.usage?.flusher.start();
  arbor.issuedTokens.start();
  announce(logger, config, url, arbor.db.kind, signIn);
}

/**
 * The start-up banner (a log line: version, address, console, database), then, in a
 * development run, the sign-in line.
 */
function announce(
  logger: Logger,
  config: Readonly<Config>,
  url: string,
  database: string,
  signIn: SignInToken | undefined,
): void {
  const consoleUrl = existsSync(join(config.consoleDir ?? defaultConsoleDir(), 'index.html'))
    ? `${url}/console/`
    : undefined;
  const version = packageVersion();
  logger.info(
    {
      version,
      url,
      console: consoleUrl ?? false,
      port: config.port,
      tls: config.tls !== undefined,
      database,
      issuer: config.issuerUrl,
      adminToken: config.adminToken !== undefined,
      devSignIn: signIn !== undefined,
    },
    `Arbor ${version} serving at ${url}${consoleUrl ? `, console at ${consoleUrl}` : ''} (database: ${database})`,
  );
  if (signIn) tellSignIn(logger, config, url, consoleUrl, signIn);
  else if (config.adminToken === undefined) {
    logger.warn('ARBOR_ADMIN_TOKEN is not set: only API tokens from the STS are accepted');
  }
}

/**
 * A development run's sign-in: one line on the terminal, else a 0600 file in DATA_DIR whose
 * path (never the token) is logged, since stdout then goes where others may read it.
 */
function tellSignIn(
  logger: Logger,
  config: Readonly<Config>,
  url: string,
  consoleUrl: string | undefined,
  signIn: SignInToken,
): void {
  if (process.stdout.isTTY === true) {
    writeOutput(process.stdout, `${signInLine(signIn.token, url, consoleUrl)}\n`);
    return;
  }
  try {
    const file = writeSignInFile(config.dataDir, signIn, url, consoleUrl);
    logger.info(
      { file },
      `Sign in: stdout is not a terminal, so this run's admin token is in ${file} (readable by you alone); for the CLI: . ${file}`,
    );
  } catch (e) {
    logger.warn(
      { error: (e as Error).message },
      'Sign in: the sign-in file could not be written; start on a terminal to see the line',
    );
  }
}
