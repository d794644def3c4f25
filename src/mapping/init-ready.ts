import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileMapping } from './compile.ts';
import { parseMapping } from './load.ts';
import type { Entity } from './schema.ts';

/** The folder of the ready-made mappings shipped with crm-ferry (beside src/ and dist/). */
export const READY_MAPPINGS_DIR = fileURLToPath(new URL('../../mappings/', import.meta.url));

/** The ready-made mappings of other CRMs' exports, which a file may match column for column. */
const CRM_EXPORTS = /^(hubspot|salesforce|pipedrive)-.+\.ya?ml$/;

export interface ReadyMapping {
  /** The mapping file, as `mappings/NAME.yaml`. */
  name: string;
  entity: Entity;
  /** How many of the file's columns it reads. */
  reads: number;
  /** The mapping's text, under a comment saying where it comes from and what to adjust. */
  yaml: string;
}

/**
 * The ready-made mapping whose columns the header has, every one of them (a ready-made mapping
 * missing one of its columns fails on the file), or null. When several fit, the one reading the
 * most columns: HubSpot's companies mapping reads a few columns its contacts export has too.
 */
export async function findReadyMapping(
  header: readonly string[],
  source: string,
  dir = READY_MAPPINGS_DIR,
): Promise<ReadyMapping | null> {
  const have = new Set(header);
  let best: (ReadyMapping & { text: string; refs: boolean }) | null = null;
  for (const name of (await readdir(dir)).filter((n) => CRM_EXPORTS.test(n)).sort()) {
    const file = join(dir, name);
    const text = await readFile(file, 'utf8');
    const mapping = parseMapping(text, file);
    const { columns } = await compileMapping(mapping, { file });
    if (columns.length === 0 || !columns.every((c) => have.has(c))) continue;
    if (best && best.reads >= columns.length) continue;
    best = {
      name: `mappings/${name}`,
      entity: mapping.entity,
      reads: columns.length,
      yaml: '',
      text,
      refs: mapping.fields.some((f) => f.ref !== undefined),
    };
  }
  if (!best) return null;
  const lines = [
    `# Started by crm-ferry mapping init from the ready-made ${best.name}:`,
    `# ${basename(source)} has every column it reads (${best.reads} of its ${header.length}). Its lookup tables (owners,`,
    "# stages, ...) are for the sandbox's seeded account: adjust them to yours (mappings/README.md).",
    ...(best.refs ? ['# Its links to other steps (ref:) need a plan: see mappings/plans/.'] : []),
  ];
  return { name: best.name, entity: best.entity, reads: best.reads, yaml: `${lines.join('\n')}\n${best.text}` };
}
