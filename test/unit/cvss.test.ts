import test from 'ava';
import {
  cvss2BaseScore,
  cvss3BaseScore,
  cvss4BaseScore,
  levelOfScore,
  levelOfText,
} from '../../src/resources/advisories/cvss.js';

// Expected scores from the FIRST calculators for these vectors.
const V3: Array<[string, number]> = [
  ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 9.8],
  ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H', 10],
  ['CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N', 6.1],
  ['CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:C/C:L/I:L/A:N', 6.4],
  ['CVSS:3.1/AV:N/AC:L/PR:H/UI:N/S:C/C:H/I:H/A:H', 9.1],
  ['CVSS:3.1/AV:L/AC:L/PR:L/UI:N/S:U/C:H/I:H/A:H', 7.8],
  ['CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:L/I:N/A:N', 3.7],
  ['CVSS:3.1/AV:P/AC:H/PR:H/UI:R/S:U/C:L/I:N/A:N', 1.6],
  ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:N', 0],
  ['CVSS:3.0/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N', 7.5],
  ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H/E:P/RL:O', 9.8],
];

test('cvss: v3.x base scores', (t) => {
  for (const [vector, score] of V3) t.is(cvss3BaseScore(vector), score, vector);
});

test('cvss: malformed v3 vectors have no score', (t) => {
  for (const v of [
    '9.8',
    'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H',
    'CVSS:3.1/AV:X/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H',
    'CVSS:3.1/AV:N/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H',
    'CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N',
  ]) {
    t.is(cvss3BaseScore(v), undefined, v);
  }
});

test('cvss: v2 base scores', (t) => {
  t.is(cvss2BaseScore('AV:N/AC:L/Au:N/C:P/I:P/A:P'), 7.5);
  t.is(cvss2BaseScore('AV:N/AC:M/Au:N/C:N/I:P/A:N'), 4.3);
  t.is(cvss2BaseScore('AV:N/AC:L/Au:N/C:C/I:C/A:C'), 10);
  t.is(cvss2BaseScore('AV:L/AC:L/Au:N/C:P/I:N/A:N'), 2.1);
  t.is(cvss2BaseScore('CVSS:3.1/AV:N'), undefined);
});

test('cvss: qualitative levels', (t) => {
  t.is(levelOfScore(9), 'CRITICAL');
  t.is(levelOfScore(8.9), 'HIGH');
  t.is(levelOfScore(4), 'MEDIUM');
  t.is(levelOfScore(0.1), 'LOW');
  t.is(levelOfScore(0), undefined);
  t.is(levelOfText('moderate'), 'MEDIUM');
  t.is(levelOfText('High'), 'HIGH');
  t.is(levelOfText('negligible'), undefined);
  t.is(levelOfText(3), undefined);
});

// v4.0: scores as FIRST's calculator gives them.
const V4: Array<[string, number]> = [
  ['CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N', 9.3],
  ['CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:H/SI:H/SA:H', 10],
  ['CVSS:4.0/AV:L/AC:L/AT:N/PR:L/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N', 8.5],
  ['CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:N/VI:N/VA:N/SC:N/SI:N/SA:N', 0],
  // Threat and supplemental metrics may follow the base ones.
  ['CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N/S:N/AU:Y', 9.3],
];

test('cvss: v4.0 base scores', (t) => {
  for (const [vector, score] of V4) t.is(cvss4BaseScore(vector), score, vector);
  t.is(levelOfScore(cvss4BaseScore(V4[0]![0])!), 'CRITICAL');
});

test('cvss: incomplete or malformed v4 vectors have no score', (t) => {
  for (const v of [
    'CVSS:4.0/AV:N',
    'CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N',
    'CVSS:4.0/AV:X/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N',
    'CVSS:4.0/AV:N/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N',
    'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H',
  ]) {
    t.is(cvss4BaseScore(v), undefined, v);
  }
});
