import cluster, { type Worker } from 'node:cluster';
import { createServer } from 'node:net';
import { availableParallelism } from 'node:os';
import type { Logger } from 'pino';
import { loadSecretKeys } from './auth/secret-keys.js';
import { loadSigningKeys } from './auth/signing-keys.js';
import { createLogger, type ComposeOptions } from './compose.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { checkDataDir } from './data-dir.js';
import { openDatabase } from './db/connect.js';
import { migrateLatest } from './db/migrate.js';
import { serverSecret } from './db/secrets.js';
import { databaseFailure, listenFailure } from './startup-error.js';
import { readTlsFiles } from './tls-files.js';
import { ticketKeySource, type TicketKeyRing } from './tls-ticket-keys.js';
import { shareTicketKeys, ticketKeysFromPrimary } from './tls-ticket-sharing.js';

/**
 * Serves the API in this process until a signal stops it (cli/serve.ts). `prepared`, when
 * given, resolves once the primary has migrated: the worker binds its port and answers its
 * probes first, and composes only then. `tickets`, with TLS in a worker: the TLS session
 * ticket keys the primary shares with every worker.
 */
export type ServeOne = (
  opts?: ComposeOptions,
  prepared?: Promise<void>,
  onServing?: () => void,
  tickets?: TicketKeyRing,
) => Promise<void>;

/** A worker asks once it listens for the answer; the primary answers once migrated. */
const WAITING = 'arbor:waiting';
const PREPARED = 'arbor:prepared';
/** A worker says so once it serves the API (composed), not merely once it listens. */
const SERVING = 'arbor:serving';

/** A worker that dies sooner than this after its start counts as a crash loop. */
const HEALTHY_AFTER_MS = 10_000;
const MAX_BACKOFF_MS = 30_000;
/** Past a worker's own drain (readiness delay + in-flight timeout), the primary stops waiting. */
const DRAIN_GRACE_MS = 5_000;

/**
 * `--workers N` (or `--workers=N`) on the command line, else ARBOR_WORKERS, else one per
 * core. PGlite is one embedded database in one process and cannot be shared: it serves
 * with one process whatever was asked.
 *
 * @throws ConfigError for a flag that is not a whole number from 1 to 256.
 */
export function workerCount(config: Readonly<Config>, args: string[], log: Logger): number {
  let asked = config.workers;
  const i = args.findIndex((a) => a === '--workers' || a.startsWith('--workers='));
  if (i >= 0) {
    const raw = args[i]!.includes('=') ? args[i]!.slice('--workers='.length) : args[i + 1];
    asked = Number(raw);
    if (!Number.isInteger(asked) || asked < 1 || asked > 256)
      throw new ConfigError(`--workers must be a whole number from 1 to 256, not "${raw}"`);
  }
  if (config.databaseUrl === undefined) {
    if (asked !== undefined && asked > 1)
      log.warn(
        { workers: asked },
        'the embedded PGlite database cannot be shared across processes: serving with 1 worker (set DATABASE_URL to use more)',
      );
    return 1;
  }
  return asked ?? availableParallelism();
}

/**
 * `arbor serve`: one process (today's behaviour) or, with more than one worker, a
 * `node:cluster` primary that prepares what must happen once (migrations, the shared
 * page-token secret, the signing and secret keys) and then forks workers that each compose Arbor and
 * listen on the same port; the primary hands connections to them in turn.
 */
export async function serveCommand(serveOne: ServeOne, args: string[]): Promise<void> {
  if (cluster.isWorker) {
    const config = loadConfig();
    const logger = createLogger(config.logLevel, config.logFormat).child({
      worker: cluster.worker!.id,
    });
    const prepared = new Promise<void>((resolve) => {
      const onMessage = (m: unknown) => {
        if (m !== PREPARED) return;
        process.off('message', onMessage);
        resolve();
      };
      process.on('message', onMessage);
      // Asked only now that the answer has a listener: a message sent earlier would be lost.
      process.send?.(WAITING);
    });
    // Before the port is bound: every ticket this worker seals, another can open.
    const tickets = config.tls ? await ticketKeysFromPrimary() : undefined;
    return serveOne({ migrate: false, logger }, prepared, () => process.send?.(SERVING), tickets);
  }
  const config = loadConfig();
  // The keys (and PGlite) live there: an odd DATA_DIR stops the command, not a worker loop.
  checkDataDir(config.dataDir);
  const logger = createLogger(config.logLevel, config.logFormat);
  const workers = workerCount(config, args, logger);
  if (workers === 1) return serveOne();
  // A bad TLS file is a configuration error of the whole command, not a crash loop of workers.
  if (config.tls) readTlsFiles(config.tls);
  // Likewise a bad ticket key file. The primary holds the ticket keys and hands them to the
  // workers (src/tls-ticket-sharing.ts): a worker replaced after a crash opens the tickets
  // the one before it sealed, and every worker opens every other's.
  if (config.tls) shareTicketKeys(ticketKeySource(config.tlsTickets), logger);
  // Workers start at once, so the port answers its probes (liveness 200, startup 503) during
  // a long migration; they compose when told the one migration run is done.
  // A port taken is the operator's to fix, not a crash loop of workers that cannot bind.
  await portFree('PORT', config.port, config.host);
  if (config.metricsPort > 0) await portFree('METRICS_PORT', config.metricsPort, config.host);
  const primary = runPrimary(
    workers,
    logger,
    config.shutdownDelayMs + config.shutdownTimeoutMs + DRAIN_GRACE_MS,
    config.tls !== undefined,
  );
  try {
    await prepareOnce(config, logger);
  } catch (e) {
    await primary.abort();
    throw databaseFailure(e, config.databaseUrl);
  }
  primary.prepared();
}

/** @throws StartupError naming `variable` when `port` cannot be bound on `host`. */
function portFree(variable: string, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (e) => reject(listenFailure(e, variable, port, host)));
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

/**
 * Everything two workers must not race for, done by the primary before any worker composes:
 * migrations, the page-token secret, and the keys generated on first start — the signing
 * key and the secret key (without ARBOR_SECRET_KEY). Workers that each generated their own
 * would sign and seal with keys the others do not hold.
 */
export async function prepareOnce(config: Readonly<Config>, logger: Logger): Promise<void> {
  const db = await openDatabase({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    pooler: config.databasePooler,
    warn: (m) => logger.warn({ component: 'db' }, m.split('\n', 1)[0]),
  });
  try {
    const applied = await migrateLatest(db.knex);
    if (applied.length > 0) logger.info({ applied }, 'migrations applied');
    await serverSecret(db.knex, 'page-token');
  } finally {
    await db.close();
  }
  await loadSigningKeys(config.signingKeysDir);
  await loadSecretKeys(config.secretKey, config.secretKeysDir);
}

/**
 * Keep `n` workers running: a worker that exits unexpectedly is replaced, after a delay
 * that doubles with each consecutive early death (up to 30 s) so that a crash loop does
 * not spin. SIGTERM or SIGINT is passed to every worker, which stops taking connections
 * and finishes its requests; the primary exits 0 once all have exited cleanly. A second
 * SIGINT (or SIGTERM) kills the workers and exits 1 at once. With TLS,
 * SIGHUP is passed on too: each worker reloads its certificate.
 */
function runPrimary(
  n: number,
  logger: Logger,
  drainLimitMs: number,
  tls: boolean,
): { prepared(): void; abort(): Promise<void> } {
  let ready = false;
  let stopping = false;
  /** Start-up failed: workers (not yet serving) are killed without a word. */
  let aborting = false;
  let earlyDeaths = 0;
  const started = new Map<Worker, number>();
  const pendingRestarts = new Set<NodeJS.Timeout>();

  const fork = () => {
    const w = cluster.fork();
    started.set(w, Date.now());
  };

  cluster.on('exit', (w, code, signal) => {
    const lived = Date.now() - (started.get(w) ?? 0);
    started.delete(w);
    if (aborting) return;
    if (stopping) {
      logger.info({ worker: w.id, pid: w.process.pid, code, signal }, 'worker stopped');
      if (code !== 0) process.exitCode = 1;
      if (started.size === 0) {
        logger.info('stopped');
        process.exit();
      }
      return;
    }
    earlyDeaths = lived < HEALTHY_AFTER_MS ? earlyDeaths + 1 : 0;
    const delay = earlyDeaths === 0 ? 0 : Math.min(MAX_BACKOFF_MS, 500 * 2 ** (earlyDeaths - 1));
    logger.error(
      { worker: w.id, pid: w.process.pid, code, signal, restartInMs: delay },
      'worker exited unexpectedly; starting a replacement',
    );
    const t = setTimeout(() => {
      pendingRestarts.delete(t);
      if (!stopping) fork();
    }, delay);
    pendingRestarts.add(t);
  });

  let first: NodeJS.Signals | undefined;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping && !aborting && first === signal) {
      // A second Ctrl-C means now: the workers are killed rather than waited for.
      logger.warn({ signal, workers: started.size }, 'second signal: exiting now');
      for (const w of started.keys()) w.process.kill('SIGKILL');
      process.exit(1);
    }
    if (stopping) return;
    stopping = true;
    first = signal;
    for (const t of pendingRestarts) clearTimeout(t);
    logger.info(
      { signal, workers: started.size },
      'shutting down: workers finish in-flight requests',
    );
    if (started.size === 0) process.exit(0);
    for (const w of started.keys()) w.process.kill('SIGTERM');
    setTimeout(() => {
      logger.warn({ workers: started.size }, 'workers did not stop in time; killing them');
      for (const w of started.keys()) w.process.kill('SIGKILL');
      process.exit(1);
    }, drainLimitMs).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // Only with TLS: otherwise SIGHUP keeps its default (the process stops), as without workers.
  if (tls)
    process.on('SIGHUP', () => {
      for (const w of started.keys()) w.process.kill('SIGHUP');
    });

  // Workers that asked before the migrations were done; a later one is answered at once.
  const waiting = new Set<Worker>();
  cluster.on('message', (w, m) => {
    if (m === SERVING) logger.info({ worker: w.id, pid: w.process.pid }, 'worker serving');
    if (m !== WAITING) return;
    if (ready) w.send(PREPARED);
    else waiting.add(w);
  });

  logger.info({ workers: n, pid: process.pid }, 'arbor primary: starting workers');
  for (let i = 0; i < n; i++) fork();
  return {
    prepared() {
      ready = true;
      for (const w of waiting) if (w.isConnected()) w.send(PREPARED);
      waiting.clear();
    },
    abort() {
      stopping = aborting = true;
      for (const t of pendingRestarts) clearTimeout(t);
      const exits = [...started.keys()].map(
        (w) =>
          new Promise<void>((r) => {
            if (w.isDead()) return r();
            w.once('exit', () => r());
            w.process.kill('SIGKILL');
          }),
      );
      return Promise.all(exits).then(() => undefined);
    },
  };
}
