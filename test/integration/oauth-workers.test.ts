import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { freshDatabase } from '../helpers/db.js';
import { startServer } from '../helpers/server.js';

/**
 * A token revoked through one worker is refused by another that had just accepted it (and
 * keeps its answer): within the change feed's delivery on PostgreSQL, within the one
 * second an answer is kept without it. Two workers over one database, sharing signing keys.
 */
test('revocation: a token revoked on one worker is refused on another within about a second', async (t) => {
  const keys = mkdtempSync(join(tmpdir(), 'arbor-keys-'));
  const db = await freshDatabase();
  const env = { ARBOR_SIGNING_KEYS_DIR: keys };
  const a = await startServer(env, { database: db });
  const b = await startServer(env, { database: { ...db, close: () => Promise.resolve() } });
  try {
    const org = await createGroup(a.admin, 'revoke-workers');
    const reader = await createRole(a.admin, org, 'reader', ['groups.list']);
    const uid = await createIdentity(a.admin, org, 'ci');
    await createBinding(a.admin, org, uid, reader);
    const { token } = await a.arbor.tokens.sign(uid, { iss: ISSUER, sub: 'sub-ci' });
    // b accepts it, and now holds the answer "not revoked".
    t.is((await b.client(token).get(`/iam/v2beta1/groups/${org}`)).status, 200);
    t.is((await b.client(token).get(`/iam/v2beta1/groups/${org}`)).status, 200);
    const revoked = await fetch(`${a.url}/oauth2/revoke`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ token }).toString(),
    });
    t.is(revoked.status, 200);
    const at = Date.now();
    t.is((await a.client(token).get(`/iam/v2beta1/groups/${org}`)).status, 401);
    let status = 200;
    while (status !== 401 && Date.now() - at < 3_000) {
      status = (await b.client(token).get(`/iam/v2beta1/groups/${org}`)).status;
      if (status !== 401) await new Promise((r) => setTimeout(r, 50));
    }
    t.is(status, 401);
    t.true(Date.now() - at < 1_500, `refused after ${Date.now() - at} ms`);
  } finally {
    await b.close();
    await a.close();
    rmSync(keys, { recursive: true, force: true });
  }
});
