import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { startArborProcess, type ArborProcess } from '../helpers/process.js';

/**
 * Crash safety of the embedded database, measured: SIGKILL the server in the middle of a
 * stream of writes, restart it on the same data directory, and check that every write it
 * acknowledged is there. The restart also takes over the lock the killed process left.
 */

const ADMIN = 'crash-test-admin-token-0123456789';
const KILLS = 20;
/** Writes in flight at once: one is always being committed when the kill comes. */
const WRITERS = 2;

async function allGroupUids(server: ArborProcess): Promise<Set<string>> {
  const out = new Set<string>();
  let token = '';
  do {
    const r = await fetch(
      `${server.url}/iam/v2beta1/groups?page_size=200${token ? `&page_token=${token}` : ''}`,
      { headers: { authorization: `Bearer ${ADMIN}` } },
    );
    if (r.status !== 200) throw new Error(`list: ${r.status} ${await r.text()}`);
    const page = (await r.json()) as { groups: Array<{ uid: string }>; nextPageToken?: string };
    for (const g of page.groups) out.add(g.uid);
    token = page.nextPageToken ?? '';
  } while (token);
  return out;
}

/** Create groups until `ackedTarget` are acknowledged, then SIGKILL with writes in flight. */
async function writeUntilKilled(server: ArborProcess, round: number, ackedTarget: number) {
  const acked: string[] = [];
  let n = 0;
  let killed = false;
  const writer = async () => {
    while (!killed) {
      const name = `r${round}-w${n++}`;
      try {
        const r = await fetch(`${server.url}/iam/v2beta1/groups`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name }),
        });
        if (r.status !== 200) throw new Error(`${r.status}`);
        acked.push(((await r.json()) as { uid: string }).uid);
      } catch {
        return; // the server is gone: this write was never acknowledged
      }
      if (acked.length >= ackedTarget && !killed) {
        killed = true;
        server.child.kill('SIGKILL');
      }
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, writer));
  await server.stop('SIGKILL');
  return acked;
}

test(`crash safety: ${KILLS} SIGKILLs mid-write lose no acknowledged write`, async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-crash-'));
  const env = { DATA_DIR: dataDir, ARBOR_ADMIN_TOKEN: ADMIN, ARBOR_SHUTDOWN_DELAY_SECONDS: '0' };
  const acked: string[] = [];
  for (let round = 0; round < KILLS; round++) {
    const server = await startArborProcess(env);
    t.teardown(() => server.stop('SIGKILL'));
    const present = await allGroupUids(server);
    const lost = acked.filter((uid) => !present.has(uid));
    t.deepEqual(lost, [], `round ${round}: acknowledged writes missing after a SIGKILL`);
    acked.push(...(await writeUntilKilled(server, round, 5 + ((round * 7) % 30))));
    t.notRegex(server.logs(), /Infinity|corrupt|PANIC/);
  }
  const last = await startArborProcess(env);
  t.teardown(() => last.stop('SIGKILL'));
  const present = await allGroupUids(last);
  t.deepEqual(
    acked.filter((uid) => !present.has(uid)),
    [],
  );
  t.true(acked.length >= KILLS * 5);
  await last.stop('SIGTERM');
  t.is(last.child.exitCode, 0, last.logs());
  t.log(`${KILLS} kills, ${acked.length} acknowledged writes, all present`);
});
