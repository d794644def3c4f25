import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Writes into `dir` a plan of two steps (organisations, then people) over samples/contacts.csv,
 * with the generic mappings less their `match:` and `onDuplicate:` (their lookups and second
 * reading are tested elsewhere): the requests a run makes are those of plain creates.
 */
export function writeContactsPlan(dir: string, plan = 'plan.yaml'): void {
  const plain = (name: string): string =>
    readFileSync(join(ROOT, 'mappings', name), 'utf8').replace(/^(match|onDuplicate): .*\n/gm, '');
  writeFileSync(join(dir, 'organisations.yaml'), plain('generic-organisations.yaml'));
  writeFileSync(join(dir, 'people.yaml'), plain('generic-people.yaml'));
  copyFileSync(join(ROOT, 'samples/contacts.csv'), join(dir, 'contacts.csv'));
  writeFileSync(
    join(dir, plan),
    'version: 1\nsteps:\n  - { name: organisations, mapping: organisations.yaml, input: contacts.csv }\n  - { name: people, mapping: people.yaml, input: contacts.csv }\n',
  );
}
