import test from 'ava';
import { relative, span, windowText } from '../../src/cli/time-left.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;
const now = Date.parse('2026-06-01T12:00:00Z');
const at = (ms: number) => new Date(now + ms).toISOString();

test('span: seconds, minutes, hours, days and years, each from one and a half of it', (t) => {
  t.is(span(0), '0s');
  t.is(span(400), '0s');
  t.is(span(45 * S), '45s');
  t.is(span(89 * S), '89s');
  t.is(span(90 * S), '2m');
  t.is(span(12 * M), '12m');
  t.is(span(89 * M), '89m');
  t.is(span(100 * M), '2h', 'not 1h: rounded, not cut');
  t.is(span(2 * H - S), '2h', '--from 2h read a second later');
  t.is(span(35 * H), '35h');
  t.is(span(36 * H), '2d');
  t.is(span(3 * D), '3d');
  t.is(span(729 * D), '729d');
  t.is(span(730 * D), '730d');
  t.is(span(731 * D), '2y');
  t.is(span(Date.parse('9999-12-31T00:00:00Z') - now), '7974y', 'far future');
  t.is(span(-3 * D), '3d', 'the size only: the sign is the sentence');
});

test('relative: in the future "in", in the past "ago"', (t) => {
  t.is(relative(now + 2 * H, now), 'in 2h');
  t.is(relative(now - 5 * M, now), '5m ago');
  t.is(relative(now, now), '0s ago', 'the instant itself has come');
});

test('windowText: a scheduled binding says when it starts, and for how long', (t) => {
  t.is(windowText({ notBefore: at(2 * H) }, now), 'starts in 2h');
  t.is(windowText({ notBefore: at(2 * H), expireTime: at(10 * H) }, now), 'starts in 2h, for 8h');
  t.is(windowText({ notBefore: at(30 * S) }, now), 'starts in 30s');
  t.is(windowText({ notBefore: at(400 * D) }, now), 'starts in 400d');
});

test('windowText: a started binding says when it expires, or nothing', (t) => {
  t.is(windowText({ expireTime: at(3 * D) }, now), 'expires in 3d');
  t.is(windowText({ notBefore: at(-H), expireTime: at(3 * D) }, now), 'expires in 3d');
  t.is(windowText({ expireTime: at(-5 * M) }, now), 'expired 5m ago');
  t.is(windowText({ expireTime: at(-1) }, now), 'expired 0s ago');
  t.is(windowText({ notBefore: at(-H) }, now), '', 'started, no end: it grants');
  t.is(windowText({ notBefore: at(0) }, now), '', 'starts at its instant (inclusive)');
  t.is(windowText({}, now), '');
});

test('windowText: what is not an instant is left out, never thrown on', (t) => {
  t.is(windowText({ notBefore: 'soon', expireTime: 42 }, now), '');
  t.is(windowText({ notBefore: 'soon', expireTime: at(3 * H) }, now), 'expires in 3h');
});
