import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Whether this runtime's AsyncLocalStorage is built on async hooks (Node 20, and 22 without
 * AsyncContextFrame) rather than on AsyncContextFrame (Node 24). Only the hook-based one has
 * `_enable`; there, a storage that has been run keeps Node's promise hooks on for every
 * promise of the process until the storage is disabled.
 */
const HOOKED =
  typeof (AsyncLocalStorage.prototype as unknown as { _enable?: unknown })._enable === 'function';

/**
 * A value carried through one call's asynchronous work (a write's consistency scope, its
 * precondition, the transaction a check reads through), as AsyncLocalStorage carries it,
 * but switched on only while a run is open.
 *
 * Why: on Node 20 the first run of an AsyncLocalStorage turns on the promise hooks for good,
 * and then every promise of every request pays for them: one write to the service made
 * every later list page and Get dearer, though none of them reads a scope. Here the storage
 * is disabled again as soon as no run is open, so reads between writes run without hooks.
 * On Node 24 (AsyncContextFrame) a run costs no hooks and nothing is switched.
 *
 * Outside every open run `get()` answers undefined, on both runtimes: work a call left
 * running after it settled does not see its value (on Node 20 it could not, the storage
 * being off).
 */
export class RequestScope<T> {
  readonly #storage = new AsyncLocalStorage<T>();
  /** Runs begun and not yet settled, nested ones included. */
  #open = 0;

  /** `fn` with `value` as what `get()` answers within it and everything it awaits. */
  run<R>(value: T, fn: () => Promise<R>): Promise<R> {
    this.#open++;
    let out: Promise<R>;
    try {
      out = this.#storage.run(value, fn);
    } catch (e) {
      this.#close();
      throw e;
    }
    return out.finally(() => this.#close());
  }

  /** The value of the run in progress, if any. */
  get(): T | undefined {
    return this.#open === 0 ? undefined : this.#storage.getStore();
  }

  #close(): void {
    // The last open run gone: off, and with no other storage on, Node's promise hooks too.
    if (--this.#open === 0 && HOOKED) this.#storage.disable();
  }
}
