import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';

/**
 * A server secret shared by every replica through the database: generated once by the
 * first process that asks, read by all the others.
 */
export async function serverSecret(knex: Knex, name: string, bytes = 32): Promise<Buffer> {
  await knex.raw(
    'INSERT INTO arbor_secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING',
    [name, randomBytes(bytes)],
  );
  const row = (await knex('arbor_secrets').where({ name }).first('value')) as {
    value: Buffer | Uint8Array;
  };
  return Buffer.from(row.value);
}
