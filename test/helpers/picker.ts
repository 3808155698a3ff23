import type { Locator, Page } from 'playwright-core';

/** A uid path: what a person must never have to type or paste into the console. */
const UID = /[0-9a-f]{40}|[0-9a-f]{16}/;

/** Type `text` into a field, failing if it is (or holds) a uid. */
export async function typeName(field: Locator, text: string): Promise<void> {
  if (UID.test(text)) throw new Error(`a person never types a uid, and "${text}" holds one`);
  await field.fill(text);
}

/**
 * Choose from a console picker (console/src/picker.tsx) by name: type the start of it into
 * the combobox labelled `label` inside `scope`, then click the offered choice `name`.
 */
export async function pick(
  page: Page,
  scope: Locator | Page,
  label: string,
  typed: string,
  name: string,
): Promise<void> {
  const box = scope.getByRole('combobox', { name: label, exact: true });
  await box.click();
  await typeName(box, typed);
  const list = scope.getByRole('listbox', { name: `${label} choices` });
  await list
    .getByRole('option')
    .filter({ has: page.locator('.pick-name', { hasText: new RegExp(`^${escape(name)}$`) }) })
    .click();
  // The choice is made when the box shows its name (the listbox has closed).
  for (let i = 0; i < 100 && (await box.inputValue()) !== name; i++)
    await new Promise((ok) => setTimeout(ok, 50));
  if ((await box.inputValue()) !== name) throw new Error(`${label}: ${name} was not picked`);
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
