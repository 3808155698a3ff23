import type { Column, Item } from '../resource-kinds.js';
import type { Printer, Printable } from './printable.js';

const GAP = '   ';
/** No column is cut below this many characters. */
const MIN_WIDTH = 8;

/** The width a table fits: the terminal's, or 80 when the output is not a terminal. */
function terminalWidth(): number {
  return process.stdout.isTTY && process.stdout.columns > 0 ? process.stdout.columns : 80;
}

/** One line: control characters and newlines from the data cannot break the table. */
function clean(s: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what is removed
  return s.replace(/[\u0000-\u001f\u007f]+/g, ' ');
}

/** `s` in `width` characters: text is cut at the end, a uid in the middle (both ends matter). */
function fit(s: string, width: number, uid: boolean): string {
  if (s.length <= width) return s;
  if (width <= 1) return '…'.slice(0, width);
  if (!uid) return `${s.slice(0, width - 1)}…`;
  const head = Math.ceil((width - 1) / 2);
  return `${s.slice(0, head)}…${s.slice(s.length - (width - 1 - head))}`;
}

/**
 * Column widths within `limit`: text columns give up characters first, the widest first,
 * so short columns (names, states) stay whole; uids are shortened only when text alone
 * cannot make room, since a whole uid is what one copies.
 */
function widths(natural: number[], uid: boolean[], header: number[], limit: number): number[] {
  const w = [...natural];
  const total = () => w.reduce((a, b) => a + b, 0) + GAP.length * (w.length - 1);
  for (const shrinkUids of [false, true]) {
    while (total() > limit) {
      let widest = -1;
      w.forEach((x, k) => {
        const floor = Math.max(MIN_WIDTH, header[k]!);
        if (uid[k] === shrinkUids && x > floor && (widest < 0 || x > w[widest]!)) widest = k;
      });
      if (widest < 0) break;
      w[widest]!--;
    }
  }
  return w;
}

function render(items: readonly Item[], all: readonly Column[], limit: number): string {
  // A column nobody has a value in only costs width: left out.
  const columns = all.filter((c) => items.some((i) => c.value(i) !== ''));
  const rows = items.map((i) => columns.map((c) => clean(c.value(i))));
  const natural = columns.map((c, k) =>
    Math.max(c.header.length, ...rows.map((r) => r[k]!.length)),
  );
  const w = widths(
    natural,
    columns.map((c) => c.uid === true),
    columns.map((c) => c.header.length),
    limit,
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, k) => fit(cell, w[k]!, columns[k]!.uid === true).padEnd(w[k]!))
      .join(GAP)
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...rows.map(line)].map((l) => `${l}\n`).join('');
}

function table(p: Printable, columns: readonly Column[], limit: number): string {
  if (p.items.length === 0 && !p.single) return '';
  return render(p.items, columns, limit);
}

/** `-o table` (the default): the kind's columns, fitted to the terminal (80 when piped). */
export const tablePrinter: Printer = (p) => table(p, p.columns, terminalWidth());

/** `-o wide`: more columns, nothing shortened. */
export const widePrinter: Printer = (p) =>
  table(p, [...p.columns, ...p.wide], Number.MAX_SAFE_INTEGER);
