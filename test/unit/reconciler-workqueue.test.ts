import test from 'ava';
import {
  DONE,
  RETRY,
  TokenBucket,
  WorkQueue,
  type Clock,
  type Outcome,
} from '../../src/reconciler/work-queue.js';

/** A hand-driven clock: timers fire only inside `advance`, in due order. */
class FakeClock implements Clock {
  t = 0;
  private seq = 0;
  private timers = new Map<number, { at: number; fn: () => void }>();
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + ms, fn });
    return id;
  }
  clearTimeout(h: unknown): void {
    this.timers.delete(h as number);
  }
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      await settle();
      const due = [...this.timers.entries()]
        .filter(([, v]) => v.at <= end)
        .sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.t = Math.max(this.t, due[1].at);
      due[1].fn();
    }
    this.t = end;
    await settle();
  }
}

/** Let pending promise callbacks (the queue's async runs) finish. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}

function harness(
  handler: (key: string) => Promise<Outcome> | Outcome,
  opts: Partial<ConstructorParameters<typeof WorkQueue>[0]> = {},
) {
  const clock = new FakeClock();
  const calls: Array<{ key: string; at: number }> = [];
  const q = new WorkQueue({
    clock,
    process: async (key) => {
      calls.push({ key, at: clock.now() });
      return handler(key);
    },
    ...opts,
  });
  q.start();
  return { q, clock, calls };
}

test('workqueue: a burst of adds for one key coalesces into one reconcile', async (t) => {
  const { q, clock, calls } = harness(() => DONE);
  q.add('a');
  q.add('a');
  q.add('a');
  await clock.advance(10);
  t.is(calls.length, 1);
});

test('workqueue: never runs one key twice at once; an add during the run reruns once after', async (t) => {
  let release!: () => void;
  let active = 0;
  let maxActive = 0;
  const { q, clock, calls } = harness(async () => {
    active++;
    maxActive = Math.max(maxActive, active);
    if (calls.length === 1) await new Promise<void>((r) => (release = r));
    active--;
    return DONE;
  });
  q.add('a');
  await clock.advance(1);
  q.add('a');
  q.add('a');
  await clock.advance(1);
  t.is(calls.length, 1, 'the second add waits for the first run');
  release();
  await clock.advance(1);
  t.is(calls.length, 2, 'dirty key runs exactly once more');
  t.is(maxActive, 1);
});

test('workqueue: failures back off exponentially per key and cap', async (t) => {
  const { q, clock, calls } = harness(() => RETRY, { baseDelayMs: 200, maxDelayMs: 1600 });
  q.add('a');
  await clock.advance(10_000);
  const gaps = calls.slice(1).map((c, i) => c.at - calls[i]!.at);
  t.deepEqual(gaps.slice(0, 6), [200, 400, 800, 1600, 1600, 1600]);
  t.is(q.backoffMs(1), 200);
  t.is(q.backoffMs(50), 1600);
});

test('workqueue: a success resets the backoff', async (t) => {
  let n = 0;
  const { q, clock, calls } = harness(() => (++n <= 3 ? RETRY : DONE));
  q.add('a');
  await clock.advance(5_000);
  t.is(calls.length, 4);
  t.is(q.failureCount('a'), 0);
  q.add('a');
  await clock.advance(1);
  t.is(calls.length, 5, 'runs at once, not after a leftover backoff');
});

test('workqueue: a throwing handler is retried with backoff and reported', async (t) => {
  const errors: unknown[] = [];
  const { q, clock, calls } = harness(
    () => {
      throw new Error('boom');
    },
    { onError: (_k, e) => errors.push(e) },
  );
  q.add('a');
  await clock.advance(700);
  t.is(calls.length, 3); // t=0, 200, 600
  t.is(errors.length, 3);
});

test('workqueue: the token bucket bounds the total rate however keys are added', async (t) => {
  const { q, clock, calls } = harness(() => DONE, { ratePerSecond: 10, burst: 5 });
  for (let i = 0; i < 50; i++) q.add(`k${i}`);
  await clock.advance(1);
  t.is(calls.length, 5, 'the burst goes at once');
  await clock.advance(1_000);
  t.is(calls.length, 15, 'then ten a second');
  await clock.advance(5_000);
  t.is(calls.length, 50);
});

test('workqueue: a handler that always asks to run again cannot spin', async (t) => {
  const { q, clock, calls } = harness(() => ({ kind: 'after', delayMs: 0 }), {
    baseDelayMs: 200,
  });
  q.add('a');
  await clock.advance(1_000);
  t.true(calls.length <= 6, `ran ${calls.length} times in 1 s`);
});

test('workqueue: an immediate add brings a delayed key forward', async (t) => {
  const { q, clock, calls } = harness(() => DONE);
  q.addAfter('a', 60_000);
  await clock.advance(10);
  t.is(calls.length, 0);
  q.add('a');
  await clock.advance(1);
  t.is(calls.length, 1);
  await clock.advance(120_000);
  t.is(calls.length, 1, 'the cancelled timer does not fire');
});

test('workqueue: addAfter keeps the earlier of two deadlines', async (t) => {
  const { q, clock, calls } = harness(() => DONE);
  q.addAfter('a', 1_000);
  q.addAfter('a', 5_000);
  await clock.advance(1_000);
  t.is(calls.length, 1);
  await clock.advance(10_000);
  t.is(calls.length, 1);
});

test('workqueue: concurrency limits parallel keys', async (t) => {
  const releases: Array<() => void> = [];
  const { q, clock, calls } = harness(
    () => new Promise<Outcome>((r) => releases.push(() => r(DONE))),
    { concurrency: 2 },
  );
  q.add('a');
  q.add('b');
  q.add('c');
  await clock.advance(1);
  t.is(calls.length, 2);
  releases[0]!();
  await clock.advance(1);
  t.is(calls.length, 3);
});

test('workqueue: stop waits for in-flight work and drops timers', async (t) => {
  let release!: () => void;
  const { q, clock, calls } = harness(
    () => new Promise<Outcome>((r) => (release = () => r(RETRY))),
  );
  q.add('a');
  await clock.advance(1);
  let stopped = false;
  const stopping = q.stop().then(() => (stopped = true));
  await settle();
  t.false(stopped);
  release();
  await stopping;
  await clock.advance(60_000);
  t.is(calls.length, 1, 'no retry after stop');
});

test('token bucket: refills at its rate up to the burst', (t) => {
  const b = new TokenBucket(2, 2, 0);
  t.true(b.take(0));
  t.true(b.take(0));
  t.false(b.take(0));
  t.is(b.waitMs(0), 500);
  t.true(b.take(500));
  t.false(b.take(500));
  t.true(b.take(10_000));
  t.true(b.take(10_000));
  t.false(b.take(10_000));
});
