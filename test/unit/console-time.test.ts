import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import test from 'ava';
import { build } from 'esbuild';

/**
 * The console's time formatter (console/src/time.ts). Nothing imports the console's sources
 * (ADR 0010, dependency-cruiser), so the test bundles the one file as the console build
 * does and loads the bundle: the same code, with no import edge into the browser door. It
 * uses only Intl, which Node has as a browser does; the expectations are Intl's own words
 * in the default locale, so the test reads the same under any LANG.
 */

interface TimeModule {
  ago(iso: string, now?: number): string;
  localTime(iso: string | undefined): string;
  localDate(iso: string | undefined): string;
  windowText(w: { notBefore?: string; expireTime?: string }, now?: number): string;
  windowSpan(w: { notBefore?: string; expireTime?: string }): string;
  fromLocalInput(value: string): string | undefined;
}

let m: TimeModule;
let dir: string;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'arbor-console-time-'));
  const out = join(dir, 'time.mjs');
  await build({
    entryPoints: [resolve('console/src/time.ts')],
    outfile: out,
    bundle: true,
    format: 'esm',
    logLevel: 'warning',
  });
  m = (await import(pathToFileURL(out).href)) as TimeModule;
});
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

const S = 1000;
const H = 3_600_000;
const D = 24 * H;
const now = Date.parse('2026-06-01T12:00:00Z');
const at = (ms: number) => new Date(now + ms).toISOString();
const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

test('ago: the largest unit it is at least one of, rounded, either way in time', (t) => {
  t.is(m.ago(at(2 * H - S), now), rtf.format(2, 'hour'), 'a start two hours off, a second on');
  t.is(m.ago(at(-5 * 60 * S), now), rtf.format(-5, 'minute'));
  t.is(m.ago(at(45 * S), now), rtf.format(45, 'second'));
  t.is(m.ago(at(0), now), rtf.format(0, 'second'));
  t.is(m.ago(at(3 * D + 60 * S), now), rtf.format(3, 'day'));
  t.is(m.ago(at(10 * D), now), rtf.format(1, 'week'));
  t.is(m.ago('9999-12-31T00:00:00Z', now), rtf.format(7974, 'year'), 'far future');
  t.is(m.ago('not a time', now), rtf.format(0, 'second'), 'never thrown on');
});

test('windowText: scheduled says when it starts; started says when it expires', (t) => {
  t.is(m.windowText({ notBefore: at(2 * H) }, now), `starts ${rtf.format(2, 'hour')}`);
  t.is(
    m.windowText({ notBefore: at(2 * H), expireTime: at(10 * H) }, now),
    `starts ${rtf.format(2, 'hour')}`,
    'not started: the start is what matters',
  );
  t.is(m.windowText({ notBefore: at(30 * S) }, now), `starts ${rtf.format(30, 'second')}`);
  t.is(m.windowText({ expireTime: at(3 * D) }, now), `expires ${rtf.format(3, 'day')}`);
  t.is(
    m.windowText({ notBefore: at(-H), expireTime: at(3 * D) }, now),
    `expires ${rtf.format(3, 'day')}`,
  );
  t.is(m.windowText({ expireTime: at(-5 * 60 * S) }, now), `expired ${rtf.format(-5, 'minute')}`);
  t.is(m.windowText({ notBefore: at(0) }, now), 'never expires', 'starts at its instant');
  t.is(m.windowText({}, now), 'never expires');
  t.is(
    m.windowText({ notBefore: '9999-12-31T00:00:00Z' }, now),
    `starts ${rtf.format(7974, 'year')}`,
  );
});

test('local times: the browser zone and locale, empty for none', (t) => {
  const iso = '2026-06-01T12:00:00.000Z';
  t.is(m.localTime(iso), new Date(iso).toLocaleString());
  t.is(m.localDate(iso), new Date(iso).toLocaleDateString());
  t.is(m.localTime(undefined), '');
  t.is(m.localTime('garbage'), '');
  t.is(
    m.windowSpan({ notBefore: iso, expireTime: at(D) }),
    `from ${new Date(iso).toLocaleString()} until ${new Date(at(D)).toLocaleString()}`,
  );
  t.is(m.windowSpan({}), '');
});

test('fromLocalInput: a wall-clock value as the instant it names here', (t) => {
  t.is(m.fromLocalInput(''), undefined);
  t.is(m.fromLocalInput('tomorrow'), undefined);
  t.is(m.fromLocalInput('2026-06-01T14:30'), new Date(2026, 5, 1, 14, 30).toISOString());
});
