/**
 * The files of a backup under way, and how they become the folder's: pages appended to a work
 * file and made durable before the progress says they are there, a work file cut back to what the
 * progress recorded, and each step's file put in place (merged with the previous one in an
 * incremental run), counted and checksummed. Every file holds account data: 0600, in a 0700 folder.
 */
import { createHash } from 'node:crypto';
import { constants, createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { replaceFile } from '../files/index.ts';
import { openNoFollow } from '../util/index.ts';
import { BACKUP_FILE_MODE, type DeletedLine, type ManifestFile, type SinceEntity } from './format.ts';
import { jsonLine, readWorkFile } from './jsonl.ts';
import { type Body, idOf } from './record-fields.ts';

const HINT = 'Give the backup another --out folder, or remove this one to back up everything again.';

/** Appends lines to a work file and makes them durable before the progress says they are there; gives the file's size. */
export async function appendLines(file: string, lines: readonly unknown[]): Promise<number> {
  const handle = await openNoFollow(
    file,
    constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT,
    { what: 'a work file of the backup', hint: HINT },
    BACKUP_FILE_MODE,
  );
  try {
    if (lines.length > 0) await handle.write(lines.map(jsonLine).join(''));
    await handle.sync();
    return (await handle.stat()).size;
  } finally {
    await handle.close();
  }
}

/** Cuts a work file back to what the progress recorded (a page written but not recorded is read again). */
export async function truncateTo(file: string, bytes: number): Promise<void> {
  const handle = await openNoFollow(
    file,
    constants.O_WRONLY | constants.O_CREAT,
    { what: 'a work file of the backup', hint: HINT },
    BACKUP_FILE_MODE,
  );
  try {
    await handle.truncate(bytes);
  } finally {
    await handle.close();
  }
}

/** The key a line is merged on in an incremental run: the record it replaces. */
/** What commitFile needs to know of a step: its file's name, and what its lines are merged by. */
export interface CommittedStep {
  kind: 'list' | 'each';
  name: string;
  since?: SinceEntity;
}

function mergeKey(step: CommittedStep): ((line: Body) => number | null) | null {
  if (step.kind === 'list' && step.since) return (line) => idOf(line);
  if (step.name === 'kase-parties') return (line) => idOf(line.kase);
  return null;
}

/**
 * Puts a step's work file in place in the folder, counted and checksummed. An incremental run
 * keeps the previous file's lines that were neither read again nor deleted. Safe to repeat after
 * a kill: merging the same changes into an already merged file gives the same file.
 */
export async function commitFile(
  dir: string,
  work: string,
  step: CommittedStep,
  incremental: boolean,
  deleted: readonly DeletedLine[],
): Promise<ManifestFile> {
  const name = `${step.name}.jsonl`;
  const target = join(dir, name);
  const source = join(work, name);
  const hash = createHash('sha256');
  let records = 0;
  let bytes = 0;
  await replaceFile(
    target,
    async (temp) => {
      const out = createWriteStream(temp, { flags: 'wx', mode: BACKUP_FILE_MODE });
      const write = (line: Body): void => {
        const text = jsonLine(line);
        hash.update(text);
        bytes += Buffer.byteLength(text);
        records += 1;
        out.write(text);
      };
      try {
        const key = mergeKey(step);
        if (incremental && key !== null) {
          const entity = step.kind === 'list' && step.since ? step.since : 'kases';
          const replaced = new Set<number>(deleted.filter((d) => d.entity === entity).map((d) => d.id));
          // kase-parties: the projects read again are those in this run's kases file.
          for await (const line of readWorkFile(step.name === 'kase-parties' ? join(work, 'kases.jsonl') : source)) {
            const id = idOf(line);
            if (id !== null) replaced.add(id);
          }
          for await (const line of readWorkFile(target)) {
            const id = key(line);
            if (id === null || !replaced.has(id)) write(line);
          }
        }
        for await (const line of readWorkFile(source)) write(line);
        out.end();
        await finished(out);
      } catch (error) {
        out.destroy();
        throw error;
      }
    },
    { mode: BACKUP_FILE_MODE },
  );
  return { records, bytes, sha256: hash.digest('hex') };
}
