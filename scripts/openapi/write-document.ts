// Writes the OpenAPI document that `arbor serve` serves at /openapi.json to the file named
// by the first argument. The app is composed for real (an in-memory PGlite, a throwaway
// data directory) with every optional route switched on, so the file describes exactly
// what the code mounts. Run by scripts/openapi/generate.sh.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { EXAMPLE_REGISTRY_SERVICE } from '../../src/api/openapi/examples.js';
import { compose } from '../../src/compose.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/connect.js';

const out = process.argv[2];
if (!out) throw new Error('usage: write-document.ts <file>');
const dataDir = mkdtempSync(join(tmpdir(), 'arbor-openapi-'));
try {
  const config = loadConfig({
    DATA_DIR: dataDir,
    // The address `npm start` serves on; the document names it as its server.
    ARBOR_ISSUER_URL: 'http://localhost:8080',
    ARBOR_REGISTRY_SERVICE: EXAMPLE_REGISTRY_SERVICE,
    ARBOR_REGISTRY_NOTIFY_TOKEN: 'openapi-document-only-0123456789',
  });
  const database = await openDatabase({ dataDir: 'memory://' });
  const arbor = await compose(config, { database, logger: pino({ level: 'warn' }) });
  writeFileSync(out, `${JSON.stringify(arbor.openapi, null, 2)}\n`);
  await arbor.close();
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
