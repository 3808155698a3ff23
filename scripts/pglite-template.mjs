// `npm run build`'s last step: this build's embedded-database template (src/db/pglite-template.ts),
// made only when it is missing, so that a build with nothing changed writes nothing. The
// check loads only the migrations; PGlite and Knex are loaded when a template is made.
import { existsSync } from 'node:fs';
import { templatePath } from '../dist/src/db/pglite-template.js';

if (!existsSync(templatePath())) {
  const { ensurePgliteTemplate } = await import('../dist/src/db/pglite-template-build.js');
  const written = await ensurePgliteTemplate();
  if (written) console.log(`pglite template: ${written}`);
}
