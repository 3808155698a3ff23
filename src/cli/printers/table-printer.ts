import type { Column, Item } from '../resource-kinds.js';
import type { Printer, Printable } from './printable.js';

const GAP = '   ';
/** No column is cut below this many characters. */
const MIN_WIDTH = 8;

/**
 * The width a table fits. On a terminal: `COLUMNS` when it is set (as `ls` and kubectl
 * read it), else the terminal's own width. Off a terminal (a pipe, a file): no limit, so
 * nothing a script reads is ever shortened.
 */
export function tableWidth(
  out: { isTTY?: boolean; columns?: number } = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): number {
  if (out.isTTY !== true) return Number.POSITIVE_INFINITY;
  const columns = Number(env.COLUMNS);
  if (Number.isInteger(columns) && columns > 0) return columns;
  return out.columns !== undefined && out.columns > 0 ? out.columns : 80;
}

/** One line: control characters and newlines from the data cannot break the table. */
function clean(s: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what is removed
  return s.replace(/[\u0000-\u001f\u007f]+/g, ' ');
}

/**
 * `s` in `width` characters: a uid is elided in the middle (both ends matter), a list keeps
 * its first whole items and says how many more (`a,b,+3`), text is cut at the end.
 */
function fit(s: string, width: number, column: Column): string {
  if (s.length <= width) return s;
  if (width <= 1) return '…'.slice(0, width);
  if (column.uid === true) {
    const head = Math.ceil((width - 1) / 2);
    return `${s.slice(0, head)}…${s.slice(s.length - (width - 1 - head))}`;
  }
  if (column.list === true) {
    const parts = s.split(',');
    for (let kept = parts.length - 1; kept >= 1; kept--) {
      const text = `${parts.slice(0, kept).join(',')},+${parts.length - kept}`;
      if (text.length <= width) return text;
    }
    return `+${parts.length}`.length <= width ? `+${parts.length}` : '…';
  }
  return `${s.slice(0, width - 1)}…`;
}

/**
 * Column widths within `limit`: free text gives up characters first, the widest first, so
 * short columns (states) stay whole; uids are shortened only when text alone cannot make
 * room. A name (`whole`) is never shortened: `registry.pull` and `registry.push` must stay
 * two names. So a table may be wider than `limit` rather than cut a name.
 */
function widths(natural: number[], columns: readonly Column[], limit: number): number[] {
  const w = [...natural];
  const total = () => w.reduce((a, b) => a + b, 0) + GAP.length * (w.length - 1);
  for (const shrinkUids of [false, true]) {
    while (total() > limit) {
      let widest = -1;
      w.forEach((x, k) => {
        const c = columns[k]!;
        const floor = Math.max(MIN_WIDTH, c.header.length);
        if (c.whole === true || (c.uid === true) !== shrinkUids || x <= floor) return;
        if (widest < 0 || x > w[widest]!) widest = k;
      });
      if (widest < 0) break;
      w[widest]!--;
    }
  }
  return w;
}

const spanOf = (natural: readonly number[]) =>
  natural.reduce((a, b) => a + b, 0) + GAP.length * (natural.length - 1);

/**
 * The table of `items` in `columns`, fitted to `limit` characters. Where the table is too
 * wide, its uid columns go first, from the right (a uid cut in the middle is no use to
 * copy, and `-o wide` shows it whole), so long as another column is left; what is still
 * too wide is fitted as {@link widths} says.
 */
export function renderTable(items: readonly Item[], all: readonly Column[], limit: number): string {
  // A column nobody has a value in only costs width: left out.
  let columns = all.filter((c) => items.some((i) => c.value(i) !== ''));
  const naturalOf = (cs: readonly Column[]) =>
    cs.map((c) => Math.max(c.header.length, ...items.map((i) => clean(c.value(i)).length)));
  while (spanOf(naturalOf(columns)) > limit) {
    const drop = columns.findLastIndex((c) => c.uid === true);
    if (drop < 0 || columns.length === 1) break;
    columns = columns.filter((_, k) => k !== drop);
  }
  const rows = items.map((i) => columns.map((c) => clean(c.value(i))));
  const natural = naturalOf(columns);
  const w = widths(natural, columns, limit);
  const line = (cells: string[]) =>
    cells
      .map((cell, k) => fit(cell, w[k]!, columns[k]!).padEnd(w[k]!))
      .join(GAP)
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...rows.map(line)].map((l) => `${l}\n`).join('');
}

function table(p: Printable, columns: readonly Column[], limit: number): string {
  if (p.items.length === 0 && !p.single) return '';
  return renderTable(p.items, columns, limit);
}

/** `-o table` (the default): the kind's columns, fitted to a terminal, whole off one. */
export const tablePrinter: Printer = (p) => table(p, p.columns, tableWidth());

/** `-o wide`: more columns (whole uids among them), nothing shortened. */
export const widePrinter: Printer = (p) =>
  table(p, [...p.columns, ...p.wide], Number.POSITIVE_INFINITY);
