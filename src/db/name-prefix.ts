import type { Knex } from 'knex';

/**
 * `column LIKE '<prefix>%'`, the prefix taken literally: LIKE's metacharacters (`%`, `_`)
 * and the escape character itself are escaped, and the pattern is a bound parameter, so a
 * caller's text can neither widen the match nor reach the SQL.
 */
export function whereNamePrefix(qb: Knex.QueryBuilder, column: string, prefix: string): void {
  const literal = prefix.replace(/[!%_]/g, (c) => `!${c}`);
  qb.whereRaw(`?? LIKE ? ESCAPE '!'`, [column, `${literal}%`]);
}
