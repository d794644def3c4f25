/**
 * Rewrites the reference part of docs/mapping.md from the mapping schema and the transforms:
 * `npm run docs:mapping` after either changed (a test holds the page to what this renders).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { renderMappingReference, withReference } from '../src/mapping/reference.ts';

const file = fileURLToPath(new URL('../docs/mapping.md', import.meta.url));
const page = await readFile(file, 'utf8');
await writeFile(file, withReference(page, renderMappingReference()));
process.stdout.write(`updated the mapping reference in ${file}\n`);
