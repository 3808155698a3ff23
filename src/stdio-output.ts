import type { Writable } from 'node:stream';

/**
 * The server's standard output and error, made safe to lose. Whoever reads them may go away
 * (`arbor serve | head`, a parent that spawned it with pipes and exited): a write then
 * fails with EPIPE. Left alone, that error is an uncaught exception that kills the process
 * at start-up, and pino's own destination retried it for ever in its exit-time flush, so a
 * stop never ended and no later signal was heard. Here a write error only ends the writing:
 * the process carries on, stops when told, and never waits on its output to do so.
 *
 * On Linux stdout and stderr are non-blocking when they are pipes or sockets (what is not
 * taken yet is queued in memory) and synchronous when they are files or terminals: a reader
 * that stops reading can hold memory, bounded here, but never the process.
 */

/** Bytes a reader that stopped reading may leave queued before further lines are dropped. */
const MAX_QUEUED_BYTES = 8 * 1024 * 1024;

const guarded = new WeakSet<Writable>();
const broken = new WeakSet<Writable>();

/** From now on an error on `out` (EPIPE, EIO, ENOSPC, …) ends its writing, nothing else. */
export function guardOutput(out: Writable): void {
  if (guarded.has(out)) return;
  guarded.add(out);
  out.on('error', () => broken.add(out));
}

/**
 * Writes `text` to `out` unless a write to it has failed or a stalled reader left too much
 * queued. Never throws and never waits.
 * @returns whether it was handed to `out`.
 */
export function writeOutput(out: Writable, text: string): boolean {
  guardOutput(out);
  if (broken.has(out) || out.destroyed || out.writableLength > MAX_QUEUED_BYTES) return false;
  try {
    out.write(text);
    return true;
  } catch {
    broken.add(out);
    return false;
  }
}

/**
 * Resolves once what was written to `out` has left the process (or can never leave), or
 * after `ms`, whichever comes first: called before an exit, so that the last lines are not
 * cut off on a pipe, without making the exit wait on a reader. Never rejects.
 */
export function outputDrained(out: Writable, ms: number): Promise<void> {
  if (broken.has(out) || out.destroyed || out.writableLength === 0) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      out.off('drain', done);
      out.off('error', done);
      out.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    out.once('drain', done);
    out.once('error', done);
    out.once('close', done);
  });
}
