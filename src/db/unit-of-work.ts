import type { Knex } from 'knex';
import { consistencyScope } from '../resources/consistency.js';
import { etagMismatch, pendingPrecondition, type Precondition } from '../resources/precondition.js';
import type { Tx, UnitOfWork } from '../resources/tx.js';
import { RequestScope } from '../core/request-scope.js';
import { resourceExhausted } from '../core/rpc-error.js';
import { isConflict, sqlState, translateDbError } from './errors.js';
import type { ChangeFeed } from './change-feed.js';
import { primaryToken, type ReadReplicas } from './read-replicas.js';

/** Recover the Knex handle behind an opaque Tx. Only db/ calls this. */
export function kx(tx: Tx): Knex | Knex.Transaction {
  return tx as unknown as Knex;
}

/** The transaction a precondition check reads through (see enforce below). */
const checking = new RequestScope<Knex.Transaction>();

/**
 * Lock the resource for the rest of the transaction, then compare its entity tag: two
 * conditional writers of one resource cannot both pass on the same version.
 * @throws RpcError FAILED_PRECONDITION (HTTP 412) on a mismatch; NOT_FOUND from current().
 */
async function enforce(trx: Knex.Transaction, pre: Precondition): Promise<void> {
  pre.enforced = true;
  await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [pre.uid]);
  if (pre.ifMatch === undefined) return;
  const etag = await checking.run(trx, () => pre.current());
  if (!pre.ifMatch.includes('*') && !pre.ifMatch.includes(etag)) throw etagMismatch(pre.uid);
}

/**
 * Whether the caller runs inside a precondition check: its reads must go through the
 * check's transaction, never to a replica or a cache.
 */
export function inPreconditionCheck(): boolean {
  return checking.get() !== undefined;
}

/** Tries of one transaction that PostgreSQL keeps aborting for conflicts. */
const ATTEMPTS = 3;

function pause(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export class KnexUnitOfWork implements UnitOfWork {
  #generation = 0;
  #retried = 0;

  constructor(
    private readonly knex: Knex,
    private readonly replicas?: ReadReplicas,
    private readonly feed?: ChangeFeed,
  ) {}

  get writeGeneration(): number {
    return this.#generation;
  }

  /**
   * A transaction PostgreSQL aborted for a conflict with another (a serialization failure,
   * 40001, or a deadlock, 40P01) rolled back whole, so it is run again, up to
   * {@link ATTEMPTS} times in all, after a short random pause that keeps the two from
   * colliding again. Then the client gets ABORTED. `fn` may therefore run more than once:
   * everything it does goes through its transaction (audit and outbox rows included).
   */
  async run<T>(fn: (tx: Tx) => Promise<T>, o: { uncached?: boolean } = {}): Promise<T> {
    try {
      const pre = pendingPrecondition();
      for (let attempt = 1; ; attempt++) {
        try {
          const out = await this.knex.transaction(async (trx) => {
            if (pre) await enforce(trx, pre);
            return fn(trx as unknown as Tx);
          });
          if (o.uncached) return out;
          this.feed?.committed();
          await this.earnToken();
          return out;
        } catch (e) {
          if (attempt >= ATTEMPTS || !isConflict(e)) throw e;
          this.#retried++;
          await pause(5 + Math.random() * 20 * attempt);
        }
      }
    } catch (e) {
      throw translateDbError(e);
    } finally {
      if (!o.uncached) this.#generation++;
    }
  }

  /** Transactions run again after a conflict, since start (for tests and metrics). */
  get conflictRetries(): number {
    return this.#retried;
  }

  /**
   * With read replicas or the read cache, a request's committed write answers with a
   * consistency token (resources/consistency.ts), which a later read, through any process,
   * may send back. Failing to read it does not fail the write, which is committed: the
   * client then reads within the lag (or cache) bound, or from the primary.
   */
  private async earnToken(): Promise<void> {
    const scope = (this.replicas || this.feed) && consistencyScope();
    if (!scope) return;
    try {
      scope.written = await primaryToken(this.knex);
    } catch {
      scope.written = undefined;
    }
  }

  async replicaRead<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    const scope = this.replicas && consistencyScope();
    if (!scope || checking.get()) return this.read(fn);
    try {
      // After a write of this request, its own token: a Get the write answers with sees it.
      const token = scope.written ?? scope.requested;
      return await this.replicas!.read(token, (k) => fn(k as unknown as Tx));
    } catch (e) {
      throw translateDbError(e);
    }
  }

  async snapshot<T>(
    fn: (tx: Tx) => Promise<T>,
    o: { statementTimeoutMs?: number } = {},
  ): Promise<T> {
    const ms = o.statementTimeoutMs;
    try {
      return await this.knex.transaction(
        async (trx) => {
          // SET takes no parameters; the value is an integer this code chose.
          if (ms !== undefined) await trx.raw(`SET LOCAL statement_timeout = ${Math.trunc(ms)}`);
          return fn(trx as unknown as Tx);
        },
        { isolationLevel: 'repeatable read', readOnly: true },
      );
    } catch (e) {
      // 57014, query_canceled: here the bound this work was given, not a busy database.
      if (ms !== undefined && sqlState(e) === '57014')
        throw resourceExhausted(`a statement ran longer than the ${Math.trunc(ms)} ms it may take`);
      throw translateDbError(e);
    }
  }

  async read<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    try {
      // Inside a precondition check, reads go through its transaction (and its lock).
      return await fn((checking.get() ?? this.knex) as unknown as Tx);
    } catch (e) {
      throw translateDbError(e);
    }
  }
}
