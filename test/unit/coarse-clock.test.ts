import test from 'ava';
import { CoarseClock } from '../../src/core/coarse-clock.js';

test('a stopped clock reads the time each call', (t) => {
  const c = new CoarseClock(60_000);
  const before = Date.now();
  const at = c.now();
  t.true(at >= before && at <= Date.now());
});

test('a started clock holds its reading until the timer refreshes it, and never runs ahead', async (t) => {
  const c = new CoarseClock(40);
  c.start();
  try {
    const first = c.now();
    t.true(first <= Date.now());
    // Without the timer a synchronous second read stays put: no Date.now() per call.
    const spin = Date.now() + 5;
    while (Date.now() < spin);
    t.is(c.now(), first);
    await new Promise((r) => setTimeout(r, 120));
    const later = c.now();
    t.true(later > first, 'the timer moved it on');
    t.true(later <= Date.now());
  } finally {
    c.stop();
  }
  // Stopped again: live readings.
  const spin = Date.now() + 2;
  while (Date.now() < spin);
  t.true(Date.now() - c.now() <= 1);
});
