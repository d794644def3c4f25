import { writeFile } from 'node:fs/promises';
import { basename, isAbsolute, resolve } from 'node:path';
import { EXIT, FerryError } from '../errors/index.ts';
import { type DraftOptions, ENTITIES, type Entity } from '../mapping/index.ts';
import { normalizeHeaderRow } from '../sources/index.ts';
import { refuseArguments, type CliIo, type Command, type ParsedArgs } from './command.ts';
import { connectionFlags, connectWith } from './connection-flags.ts';
import { listSome, MAX_MAPPING_BYTES, MAX_MAPPING_FIELDS, printableLines, formatCount } from '../util/index.ts';

function pathIn(io: CliIo, file: string): string {
  return isAbsolute(file) ? file : resolve(io.cwd, file);
}

/** Writes to --out, or stdout. `replace: false` never writes over a file (a mapping someone edited, the input itself). */
async function writeOut(io: CliIo, out: string | undefined, text: string, replace = true): Promise<void> {
  if (out === undefined) {
    io.stdout.write(text);
    return;
  }
  try {
    await writeFile(pathIn(io, out), text, { flag: replace ? 'w' : 'wx' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST')
      throw new FerryError('USAGE', `${out} already exists; nothing was written`, {
        cause: error,
        hint: 'Give another --out, or --force to replace the file.',
      });
    const why =
      code === 'ENOENT'
        ? 'its folder does not exist'
        : code === 'EACCES' || code === 'EPERM'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'it is a folder'
            : (error as Error).message;
    throw new FerryError('USAGE', `cannot write ${out}: ${why}`, {
      cause: error,
      hint: 'Give --out a file in a folder you can write to.',
    });
  }
  io.stderr.write(`wrote ${out}\n`);
}

export const mappingSchemaCommand: Command = {
  name: 'mapping schema',
  usage: `Usage: crm-ferry mapping schema [--out FILE]

Writes the JSON Schema of mapping files (from the same schema crm-ferry validates them with), so
that editors complete and check them.`,
  epilog: `Point the YAML language server at it with a first line:
  # yaml-language-server: $schema=./mapping.schema.json`,
  options: { out: { type: 'string', value: 'FILE', describe: 'write to FILE instead of standard output' } },
  async run(args, io) {
    refuseArguments('mapping schema', args);
    const { mappingJsonSchema } = await import('../mapping/index.ts');
    await writeOut(io, args.values.out as string | undefined, `${JSON.stringify(mappingJsonSchema(), null, 2)}\n`);
    return EXIT.OK;
  },
};

/** Columns not carried that the summary names; the draft lists every one. */
const NOT_CARRIED_SHOWN = 10;

/** Builds the library options from the flags; every flag error is a USAGE error. */
export function toInitOptions(args: ParsedArgs): { file: string; out: string | undefined; options: DraftOptions } {
  if (args.positionals.length !== 1) {
    throw new FerryError('USAGE', `mapping init takes exactly one FILE, got ${args.positionals.length}`, {
      hint: 'Usage: crm-ferry mapping init FILE [--entity party|kase|opportunity|entry|task] [--out M.yaml] [--online]',
    });
  }
  const v = args.values;
  const entity = v.entity as string | undefined;
  if (entity !== undefined && !(ENTITIES as readonly string[]).includes(entity)) {
    throw new FerryError('USAGE', `--entity must be one of ${ENTITIES.join(', ')}, got ${JSON.stringify(entity)}`);
  }
  const options: DraftOptions = {};
  if (entity !== undefined) options.entity = entity as Entity;
  if (v.sheet !== undefined) options.sheet = v.sheet as string;
  if (v['header-row'] !== undefined) {
    try {
      options.headerRow = normalizeHeaderRow(v['header-row'] as string);
    } catch (error) {
      throw new FerryError('USAGE', (error as Error).message, { cause: error });
    }
  }
  return { file: args.positionals[0] as string, out: v.out as string | undefined, options };
}

export const mappingInitCommand: Command = {
  name: 'mapping init',
  usage: `Usage: crm-ferry mapping init FILE [options]

Reads the header and a few rows of FILE (CSV, XLSX or a legacy export) and drafts a mapping: column
names in English, French, German, Spanish, Dutch and Italian (First Name, Prénom, Firma, Empresa ...)
become targets, an id-like column (else the email) becomes the key, and transforms are proposed from
the values (date formats, number locales, phone countries, list separators, yes/no), each with a
comment saying why. With --online, other columns with values go to the account's custom fields of
their name that take their values (a date column to a Date field, yes/no to a Boolean, a List whose
choices hold every value); offline, or where the account has no such field, a column is left out
(\`leaveOut:\`), with the field to create and its entry written as a comment. Links to other
files and empty columns are listed as comments. A phone column takes each row's country from a
country column (Land, Country, Pays ... : Nederland, België, DE), else the country the numbers
and the file's addresses point to, said in words when it is a guess. A file of companies (its
registry number, its sector, a company name and no person's) is drafted as organisations. A legacy v1 export is drafted as the records it holds (its
opportunities as opportunities). A file that has every column of a ready-made mapping (the
HubSpot, Salesforce and Pipedrive exports in mappings/) starts from that mapping instead, and
says so.`,
  options: {
    entity: {
      type: 'string',
      value: 'E',
      describe: "party, kase, opportunity, entry or task (default: a legacy export's own kind of records, else party)",
    },
    out: { type: 'string', value: 'FILE', describe: 'write the draft to FILE instead of standard output' },
    sheet: { type: 'string', value: 'S', describe: 'XLSX: sheet name or 1-based number' },
    'header-row': { type: 'string', value: 'N|none', describe: 'row holding the column names (default 1)' },
    force: { type: 'boolean', describe: 'replace the --out file if it exists (otherwise it is left alone)' },
    draft: {
      type: 'boolean',
      describe: 'draft from the columns even when a ready-made mapping (HubSpot, Salesforce, Pipedrive) reads the file',
    },
    online: {
      type: 'boolean',
      describe: "map columns to the account's custom fields (needs a connection; one request)",
    },
    ...connectionFlags,
  },
  async run(args, io) {
    const { file, out, options } = toInitOptions(args);
    const { draftMapping } = await import('../mapping/index.ts');
    const { parseMapping } = await import('../mapping/index.ts');
    const { compileMapping } = await import('../mapping/index.ts');
    let draft = await draftMapping(pathIn(io, file), { ...options, signal: io.signal });
    if (args.values.online) {
      // The entity's custom fields decide where the other columns go: read once the entity is known.
      const { ENTITY_PLURAL } = await import('../mapping/index.ts');
      const fieldEntity = (ENTITY_PLURAL as Partial<Record<Entity, 'parties' | 'kases' | 'opportunities'>>)[
        draft.entity
      ];
      if (fieldEntity !== undefined) {
        const { client } = await connectWith(args, io);
        try {
          const { readCatalogPart } = await import('../client/index.ts');
          const part = await readCatalogPart(client, { fieldDefinitions: [fieldEntity], users: false, teams: false });
          draft = await draftMapping(pathIn(io, file), {
            ...options,
            entity: draft.entity,
            customFields: part.fieldDefinitions[fieldEntity] ?? [],
            signal: io.signal,
          });
        } finally {
          await client.close();
        }
      }
    }
    // Another CRM's export that a ready-made mapping reads: start from that, not from a guess.
    const { findReadyMapping } = await import('../mapping/index.ts');
    const ready = args.values.draft ? null : await findReadyMapping(draft.header, file);
    const fits = ready !== null && (options.entity === undefined || options.entity === ready.entity);
    const yaml = ready && fits ? ready.yaml : draft.yaml;
    // A draft that does not load is a bug here, not the user's problem: check before handing it out,
    // and say so (the draft is not a file yet: no name of one).
    const name = `the draft for ${basename(file)}`;
    try {
      await compileMapping(parseMapping(yaml, name), { file: name, baseDir: io.cwd });
    } catch (error) {
      if (!(error instanceof FerryError)) throw error;
      throw new FerryError(
        'INTERNAL',
        `crm-ferry drafted a mapping for ${basename(file)} that it cannot load itself (${error.code}: ${error.message}); nothing was written`,
        {
          cause: error,
          hint: "This is a bug in crm-ferry: please report it with the file's header row. Meanwhile write the mapping by hand (docs/mapping.md).",
        },
      );
    }
    await writeOut(io, out, yaml, Boolean(args.values.force));
    if (ready && fits) {
      io.stderr.write(
        `the columns match the ready-made ${ready.name} (it reads ${ready.reads} of the ${draft.header.length} columns): started from it; --draft drafts from the columns instead\n`,
      );
      return EXIT.OK;
    }
    if (draft.entityReason)
      io.stderr.write(
        printableLines(`drafted as ${draft.entity}: ${draft.entityReason} (--entity to choose another)\n`),
      );
    io.stderr.write(
      printableLines(
        `mapped ${draft.matched.length} of ${draft.header.length} columns; key ${draft.key}${draft.unmatched.length ? `; not mapped: ${listSome(draft.unmatched)}` : ''}\n`,
      ),
    );
    if (draft.organisations) io.stderr.write(printableLines(`drafted as organisations: ${draft.organisations}\n`));
    if (draft.notCarried.length > 0) {
      io.stderr.write(`not carried (under leaveOut:, the entry to add as a comment):\n`);
      for (const { column, why } of draft.notCarried.slice(0, NOT_CARRIED_SHOWN))
        io.stderr.write(printableLines(`  ${JSON.stringify(column)}: ${why}\n`));
      if (draft.notCarried.length > NOT_CARRIED_SHOWN)
        io.stderr.write(
          `  and ${formatCount(draft.notCarried.length - NOT_CARRIED_SHOWN)} more (listed in the draft)\n`,
        );
    }
    if (draft.leftOut.length > 0) {
      io.stderr.write(
        `${formatCount(draft.leftOut.length)} columns are not drafted: a mapping file holds at most ${formatCount(MAX_MAPPING_FIELDS)} entries and ${MAX_MAPPING_BYTES / (1024 * 1024)} MB; carry them in a second mapping (a step of a plan), or leave them out\n`,
      );
    }
    return EXIT.OK;
  },
};
