/**
 * Between a state folder and its state in a PostgreSQL store: a journal brought to what the store
 * holds (the folder's lines the store has are kept, the rest taken from the store), and a
 * folder's journal moved into a store that has none. The folder's seal (lines, bytes, chained
 * CRC-32) is the store's groups' end, so the two are compared without reading either whole.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { FerryError } from '../errors/index.ts';
import { replaceFile } from '../files/index.ts';
import { EMPTY_SEAL, type JournalSeal, openStateFile, sealAfter } from './journal.ts';
import type { StoreState } from './store-state.ts';

/** Whether `file` starts with the lines `seal` says (its first `seal.bytes` bytes chain to `seal.crc`). */
async function startsWith(file: string, seal: JournalSeal): Promise<boolean> {
  if (seal.bytes === 0) return true;
  let read: JournalSeal = EMPTY_SEAL;
  try {
    const handle = await openStateFile(file, constants.O_RDONLY, `the journal ${file}`);
    for await (const chunk of handle.createReadStream({ start: 0, end: seal.bytes - 1 }) as AsyncIterable<Buffer>)
      read = sealAfter(read, chunk, 0);
  } catch {
    return false;
  }
  return read.bytes === seal.bytes && read.crc === seal.crc;
}

/**
 * Brings the folder's journal `file` (named `name` in the store) to the store's, which ends at
 * `end`. When the folder's seal is a place where one of the store's groups ends, and the file
 * starts with it, the file is cut there and the store's later groups appended (lines a killed run
 * wrote in the folder and never committed to the store go); otherwise the file is written anew
 * from the store.
 */
export async function pullJournal(
  state: StoreState,
  name: string,
  file: string,
  folderSeal: JournalSeal | null,
  end: JournalSeal,
): Promise<void> {
  let kept: JournalSeal | null = null;
  if (folderSeal !== null && folderSeal.lines <= end.lines) {
    const there = folderSeal.lines === 0 ? EMPTY_SEAL : await state.endAt(name, folderSeal.lines);
    if (there && there.bytes === folderSeal.bytes && there.crc === folderSeal.crc && (await startsWith(file, there)))
      kept = there;
  }
  const fill = async (target: string, flags: number, from: number): Promise<void> => {
    const handle = await openStateFile(target, flags, `the journal ${name}`);
    try {
      await handle.truncate(kept?.bytes ?? 0);
      for await (const group of state.groupsAfter(name, from)) await handle.write(group, 0, group.length, null);
      await handle.sync();
    } finally {
      await handle.close();
    }
  };
  try {
    if (kept !== null) await fill(file, constants.O_RDWR | constants.O_APPEND, kept.lines);
    else
      await replaceFile(file, (temp) =>
        fill(temp, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_EXCL, 0),
      );
  } catch (error) {
    if (error instanceof FerryError) throw error;
    throw new FerryError(
      'JOURNAL_WRITE',
      `cannot bring the journal ${file} up to the state store's: ${(error as Error).message}`,
      { location: { file }, cause: error },
    );
  }
}

/** A group moved into the store at a time: about this many bytes of whole lines. */
const PUSH_GROUP_BYTES = 1 << 20;

/**
 * Moves the folder's journal `file` into a store that holds none of it: its lines up to `seal`
 * (every whole line when the journal has no seal), in groups of about a megabyte.
 */
export async function pushJournal(
  state: StoreState,
  name: string,
  file: string,
  seal: JournalSeal | null,
): Promise<void> {
  let at: JournalSeal = EMPTY_SEAL;
  let pending: Buffer = Buffer.alloc(0);
  const send = async (bytes: Buffer): Promise<void> => {
    let lines = 0;
    for (const byte of bytes) if (byte === 0x0a) lines += 1;
    const next = sealAfter(at, bytes, lines);
    await state.appendGroup(name, bytes, at, next);
    at = next;
  };
  const end = seal?.bytes;
  if (end === 0) return;
  if (seal !== null && !(await startsWith(file, seal))) {
    throw new FerryError(
      'JOURNAL_CORRUPT',
      `the journal ${file} does not start with the ${seal.lines} lines its runs wrote, and was not moved into the state store`,
      {
        location: { file },
        hint: 'Put back the journal the runs wrote, or first run the same command without --state-store and with --reconcile.',
      },
    );
  }
  const handle = await openStateFile(file, constants.O_RDONLY, `the journal ${file}`);
  const stream = handle.createReadStream(end !== undefined ? { end: end - 1 } : {});
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    if (pending.length < PUSH_GROUP_BYTES) continue;
    const cut = pending.lastIndexOf(0x0a);
    if (cut < 0) continue;
    await send(pending.subarray(0, cut + 1));
    pending = pending.subarray(cut + 1);
  }
  // A torn last line (a crash in an append) stays behind, as loading the journal drops it.
  const cut = pending.lastIndexOf(0x0a);
  if (cut >= 0) await send(pending.subarray(0, cut + 1));
}

/** Writes a file the store holds into the folder, a part at a time, in place of the one there. */
export async function pullFile(file: string, parts: AsyncIterable<Buffer>): Promise<void> {
  await replaceFile(file, async (temp) => {
    const handle = await open(temp, 'wx', 0o600);
    try {
      for await (const part of parts) await handle.write(part, 0, part.length, null);
    } finally {
      await handle.close();
    }
  });
}
