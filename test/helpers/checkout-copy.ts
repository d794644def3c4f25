import { cpSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout the tests run from. */
export const CHECKOUT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * What a user's runs leave among the bundled files when the README is followed in the checkout:
 * state folders, validate's rejects and warnings files, hidden files. A test must never read them.
 */
export function leftByRuns(path: string): boolean {
  const name = basename(path);
  return name.startsWith('.') || /(^|\.)(rejects|warnings)\.csv$/.test(name);
}

/**
 * Copies folders of the checkout (`mappings`, `samples`, ...) into `into`, as shipped: without
 * anything a user's runs left in them (leftByRuns), so a test's runs start from the files alone.
 */
export function copyFromCheckout(folders: readonly string[], into: string): void {
  for (const folder of folders) {
    cpSync(join(CHECKOUT, folder), join(into, folder), {
      recursive: true,
      filter: (source) => source === join(CHECKOUT, folder) || !leftByRuns(source),
    });
  }
}
