import test from 'ava';
import { parseRegistryPath } from '../../src/resources/registry-auth/registry-path.js';
import { microTime } from '../../src/resources/registry-auth/registry-event-service.js';
import { parseScopes } from '../../src/resources/registry-auth/registry-token-service.js';

const ORG = 'a'.repeat(40);

test('registry paths: the group uid path, then the repo name', (t) => {
  t.deepEqual(parseRegistryPath(`${ORG}/app`), { groupUid: ORG, repoName: 'app' });
  t.deepEqual(parseRegistryPath(`${ORG}/0123456789abcdef/my-app.v2`), {
    groupUid: `${ORG}/0123456789abcdef`,
    repoName: 'my-app.v2',
  });
  for (const bad of [
    'app',
    `${ORG}`,
    `${ORG}/`,
    `/${ORG}/app`,
    'library/ubuntu',
    `${ORG}/App`,
    `${ORG}/a/b`,
    `${ORG.slice(1)}/app`,
    `${ORG}/app/`,
  ]) {
    t.is(parseRegistryPath(bad), undefined, bad);
  }
});

test('scopes: type, name and actions; several per parameter; malformed ones dropped', (t) => {
  t.deepEqual(parseScopes([`repository:${ORG}/app:pull,push`, 'registry:catalog:*']), [
    { type: 'repository', name: `${ORG}/app`, actions: ['pull', 'push'] },
    { type: 'registry', name: 'catalog', actions: ['*'] },
  ]);
  t.deepEqual(parseScopes(['repository:a:pull repository:b:push,push']), [
    { type: 'repository', name: 'a', actions: ['pull'] },
    { type: 'repository', name: 'b', actions: ['push'] },
  ]);
  t.deepEqual(parseScopes(['repository:host:5000/x:pull']), [
    { type: 'repository', name: 'host:5000/x', actions: ['pull'] },
  ]);
  t.deepEqual(parseScopes(['nonsense', 'repository:x', ':x:pull', 'repository::pull', 'r:x:']), []);
});

test('event times: normalised to UTC microseconds, so a redelivery compares equal', (t) => {
  t.is(microTime('2026-01-01T10:00:00.123456789Z'), '2026-01-01T10:00:00.123456Z');
  t.is(microTime('2026-01-01T12:00:00.5+02:00'), '2026-01-01T10:00:00.500000Z');
  t.is(microTime('2026-01-01T10:00:00Z'), '2026-01-01T10:00:00.000000Z');
  for (const bad of ['yesterday', '2026-01-01', '2026-13-01T00:00:00Z', '']) {
    t.is(microTime(bad), undefined, bad);
  }
});
