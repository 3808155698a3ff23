/**
 * Consistency tokens (docs/operations.md, "Read replicas"): a write's commit position in
 * PostgreSQL's write-ahead log, which every streaming replica replays in order. A replica
 * whose `pg_last_wal_replay_lsn()` is at or past a token has applied that write.
 *
 * The form is `1.` and the LSN as lower-case hex: the `1.` leaves room for another form
 * later. Clients treat it as opaque. A token is not secret and need not be unforgeable: the
 * only thing it can do is demand a replica at least that far along, so a forged or foreign
 * one at worst sends the read to the primary, which is always fresh.
 */

/** An LSN as PostgreSQL prints it (`16/B374D848`), as a number. */
export function parseLsn(text: string): bigint {
  const m = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text);
  if (!m) throw new Error(`not an LSN: ${text}`);
  return (BigInt(`0x${m[1]}`) << 32n) | BigInt(`0x${m[2]}`);
}

export function encodeToken(lsn: bigint): string {
  return `1.${lsn.toString(16)}`;
}

/** The LSN of a well-formed token; undefined for anything else (the read then goes to the primary). */
export function decodeToken(token: string | undefined): bigint | undefined {
  if (token === undefined) return undefined;
  const m = /^1\.([0-9a-f]{1,16})$/.exec(token.trim());
  return m ? BigInt(`0x${m[1]}`) : undefined;
}
