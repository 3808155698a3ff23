import type { Command } from 'commander';

/**
 * Turns what commander parsed back into the argument list of a command module that parses
 * its own (`node:util` parseArgs). Commander still owns help, unknown-option errors and
 * completion; the module keeps its one entry point, so it can be run from tests as before.
 */
export function argvOf(cmd: Command, operands: readonly string[] = []): string[] {
  const out: string[] = [];
  const values = cmd.opts<Record<string, unknown>>();
  for (const o of cmd.options) {
    const v = values[o.attributeName()];
    const flag = o.long ?? o.short;
    // `--no-x` is stored as x = false; hand the module the flag it knows.
    if (o.negate) {
      if (v === false && flag !== undefined) out.push(flag);
      continue;
    }
    if (v === undefined || v === false || flag === undefined) continue;
    if (v === true) out.push(flag);
    else if (Array.isArray(v)) for (const x of v) out.push(flag, String(x));
    else if (typeof v === 'string' || typeof v === 'number') out.push(flag, String(v));
  }
  return [...out, ...operands];
}

/** Collects a repeatable option (`--scope a --scope b`). */
export function repeat(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
