import { CAPABILITIES } from '../auth/capabilities.js';
import { describeCapability } from './capability-words.js';
import { packageVersion } from './package-version.js';
import { renderTable, tableWidth } from './printers/table-printer.js';

/** `arbor capabilities`: the catalogue a role is made of, each with what it allows. */
export function capabilitiesCommand(format: string): void {
  const items = CAPABILITIES.map((c) => ({ name: c, description: describeCapability(c) }));
  if (format === 'json') process.stdout.write(`${JSON.stringify(items, null, 2)}\n`);
  else if (format === 'name') process.stdout.write(CAPABILITIES.map((c) => `${c}\n`).join(''));
  else
    process.stdout.write(
      renderTable(
        items,
        [
          { header: 'CAPABILITY', value: (i) => String(i.name), whole: true },
          { header: 'ALLOWS (AT THE GROUP AND BELOW)', value: (i) => String(i.description) },
        ],
        tableWidth(),
      ),
    );
}

/** `arbor version`: this CLI's version and the Node.js it runs on. */
export function versionCommand(format: string): void {
  const v = { arbor: packageVersion(), node: process.versions.node };
  process.stdout.write(
    format === 'json'
      ? `${JSON.stringify(v, null, 2)}\n`
      : `arbor ${v.arbor} (Node.js ${v.node})\n`,
  );
}
