import test from 'ava';
import { databaseBehindProxy } from '../helpers/db.js';
import { startServer } from '../helpers/server.js';
import { postgresOnly } from '../helpers/need-tool.js';

// Only a server database can go away under a running process; PGlite lives inside it.
const maybe = postgresOnly(test);

maybe(
  'outage: a database that goes away gives UNAVAILABLE, and service resumes when it returns',
  async (t) => {
    const { real, db, proxy, port } = await databaseBehindProxy();
    const s = await startServer(
      {},
      {
        database: {
          ...db,
          close: async () => {
            await db.close();
            await real.close();
          },
        },
      },
    );
    try {
      t.is((await s.admin.post('/iam/v2beta1/groups', { name: 'before' })).status, 200);

      await proxy.stop();
      const down = await s.admin.get('/iam/v2beta1/groups');
      t.is(down.status, 503);
      t.is(down.body.code, 14);
      t.like(down.body.details[0], { reason: 'UNAVAILABLE' });
      t.notRegex(
        JSON.stringify(down.body),
        /ECONNREFUSED|select|terminated|127\.0\.0\.1/i,
        'nothing internal leaks',
      );
      const ready = await s.client().get('/readyz');
      t.is(ready.status, 503);

      await proxy.start(port);
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i++) {
        status = (await s.admin.get('/iam/v2beta1/groups')).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 200));
      }
      t.is(status, 200, 'recovers without a restart');
      const list = await s.admin.get('/iam/v2beta1/groups?name=before');
      t.is(list.body.totalCount, '1');
      t.is((await s.client().get('/readyz')).status, 200);
    } finally {
      await s.close();
      await proxy.stop();
    }
  },
);
