import test from 'ava';
import { executionAsyncResource } from 'node:async_hooks';
import { setImmediate as tick } from 'node:timers/promises';
import { RequestScope } from '../../src/core/request-scope.js';

/** Whether Node tracks promises now: with its promise hooks on, a reaction runs as its promise. */
const promiseHooksOn = (): Promise<boolean> =>
  new Promise((resolve) => {
    void Promise.resolve().then(() => resolve(executionAsyncResource() instanceof Promise));
  });

test('a run carries its value through what it awaits, and concurrent runs keep their own', async (t) => {
  const scope = new RequestScope<string>();
  const seen = await Promise.all(
    ['a', 'b', 'c'].map((v, i) =>
      scope.run(v, async () => {
        await tick();
        await new Promise((r) => setTimeout(r, 3 - i));
        return scope.get();
      }),
    ),
  );
  t.deepEqual(seen, ['a', 'b', 'c']);
});

test('nested runs: the inner value inside, the outer one again after it', async (t) => {
  const scope = new RequestScope<number>();
  const seen = await scope.run(1, async () => {
    const inner = await scope.run(2, async () => {
      await tick();
      return scope.get();
    });
    await tick();
    return [inner, scope.get()];
  });
  t.deepEqual(seen, [2, 1]);
});

test('outside every open run there is no value, after a failure too', async (t) => {
  const scope = new RequestScope<string>();
  t.is(scope.get(), undefined);
  await scope.run('x', async () => tick());
  t.is(scope.get(), undefined);
  await t.throwsAsync(
    scope.run('y', async () => {
      await tick();
      throw new Error('boom');
    }),
    { message: 'boom' },
  );
  t.is(scope.get(), undefined);
  t.throws(() =>
    scope.run('z', () => {
      throw new Error('sync');
    }),
  );
  t.is(scope.get(), undefined);
  // Still usable after both failures.
  t.is(await scope.run('w', () => Promise.resolve(scope.get())), 'w');
});

test.serial(
  "once no run is open, Node's promise hooks are off again (they cost every later read)",
  async (t) => {
    const scope = new RequestScope<string>();
    // Serial, so first in this file's process: no other test's run is open.
    t.false(await promiseHooksOn(), 'promise hooks on before any run: the test cannot tell');
    let during = false;
    await scope.run('write', async () => {
      during = await promiseHooksOn();
    });
    await tick();
    // Node 24's AsyncContextFrame never turns them on; Node 20's storage does while it runs.
    t.false(
      await promiseHooksOn(),
      `promise hooks left on after the run (on during it: ${during})`,
    );
  },
);
