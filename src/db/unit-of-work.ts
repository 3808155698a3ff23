import type { Knex } from 'knex';
import type { Tx, UnitOfWork } from '../resources/tx.js';
import { translateDbError } from './errors.js';

/** Recover the Knex handle behind an opaque Tx. Only db/ calls this. */
export function kx(tx: Tx): Knex | Knex.Transaction {
  return tx as unknown as Knex;
}

export class KnexUnitOfWork implements UnitOfWork {
  #generation = 0;

  constructor(private readonly knex: Knex) {}

  get writeGeneration(): number {
    return this.#generation;
  }

  async run<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    try {
      return await this.knex.transaction((trx) => fn(trx as unknown as Tx));
    } catch (e) {
      throw translateDbError(e);
    } finally {
      this.#generation++;
    }
  }

  async read<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    try {
      return await fn(this.knex as unknown as Tx);
    } catch (e) {
      throw translateDbError(e);
    }
  }
}
