import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { unnamedStatements } from './pooler-mode.js';

interface PgConnection {
  query(
    q: { name?: string; text: string; values: unknown[] },
    done: (err: Error | null, res: { rows: unknown[] }) => void,
  ): void;
}

interface PoolClient {
  dialect: string;
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(c: PgConnection): Promise<void>;
}

/**
 * A fixed SQL statement of a hot path, written once with `$1…$n` (each used once, in
 * order) instead of being built by Knex on every request.
 *
 * On PostgreSQL outside a transaction it runs as a named prepared statement on a
 * connection of Knex's own pool: each connection parses and plans it once, and later
 * executions send only the parameters. The driver remembers what it prepared on each
 * connection object, so a connection opened after a failover prepares afresh. Behind a
 * transaction-mode pooler (DATABASE_POOLER=transaction) it runs unnamed: the server
 * connection under the next statement may not be the one that prepared it. Inside a transaction, and on PGlite (one embedded
 * connection behind the knex-pglite dialect), it runs as the same text through
 * `knex.raw`. Either way Knex's `query` event sees the text and parameters, so query logs
 * and the benchmark's SQL capture see what runs.
 */
export class Statement {
  /** Derived from the text, so one name never stands for two statements. */
  readonly name: string;
  readonly #positional: string;
  readonly #params: number;

  constructor(readonly text: string) {
    this.name = `arbor_${createHash('sha256').update(text).digest('hex').slice(0, 20)}`;
    const params = [...text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1]));
    if (params.some((n, i) => n !== i + 1) || text.includes('?'))
      throw new Error(`statement parameters must be $1..$n in order, once each: ${text}`);
    this.#params = params.length;
    this.#positional = text.replace(/\$\d+/g, '?');
  }

  /** @throws whatever the driver throws (the unit of work translates it). */
  async rows<R>(k: Knex | Knex.Transaction, values: unknown[]): Promise<R[]> {
    if (values.length !== this.#params)
      throw new Error(`${this.name}: ${this.#params} parameters, ${values.length} given`);
    const client = k.client as PoolClient;
    if ((k as Knex.Transaction).isTransaction || client.dialect !== 'postgresql') {
      const res = (await k.raw(this.#positional, values as Knex.RawBinding[])) as { rows: R[] };
      return res.rows;
    }
    k.emit('query', { method: 'raw', sql: this.text, bindings: values, name: this.name });
    const conn = await client.acquireConnection();
    try {
      return await rowsOf<R>(
        conn,
        unnamedStatements(k)
          ? { text: this.text, values }
          : { name: this.name, text: this.text, values },
      );
    } finally {
      await client.releaseConnection(conn);
    }
  }
}

/**
 * The statement's rows, through the driver's callback form of `query`, as Knex's own
 * runner calls it. Why not its promise form: with it, every row of a result outlived the
 * next young-generation collection and was promoted (30.6 KB promoted a 50-row page against
 * 0.2 KB with the callback form, `bench/promotion-probe.ts`), so a list page's rows cost
 * old-generation collections and the scavenges copying them took five times as long.
 */
function rowsOf<R>(
  conn: PgConnection,
  q: { name?: string; text: string; values: unknown[] },
): Promise<R[]> {
  return new Promise((resolve, reject) =>
    conn.query(q, (err, res) => (err ? reject(err) : resolve(res.rows as R[]))),
  );
}
