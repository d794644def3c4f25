import { readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * File contents of uploads and attachments. Without a folder they live in memory; with one, each
 * is a file named by its id in that folder, written (and synced) by the change log before the
 * write that made it is answered, and read back from disk when asked for. Keeping them out of
 * the state document is what lets the state hold gigabytes of attachments.
 */
export class BlobStore {
  /** Contents not yet on disk (all of them without a folder). */
  private readonly pending = new Map<string, Buffer>();
  /** Ids whose file is on disk. */
  private readonly stored = new Set<string>();
  private readonly added = new Set<string>();
  private readonly removed = new Set<string>();
  folder: string | null = null;

  get(id: string): Buffer | undefined {
    const inMemory = this.pending.get(id);
    if (inMemory !== undefined) return inMemory;
    if (this.folder === null || !this.stored.has(id)) return undefined;
    return readFileSync(join(this.folder, id));
  }

  has(id: string): boolean {
    return this.pending.has(id) || this.stored.has(id);
  }

  set(id: string, bytes: Buffer): void {
    this.pending.set(id, bytes);
    this.added.add(id);
    this.removed.delete(id);
  }

  delete(id: string): boolean {
    const had = this.has(id);
    this.pending.delete(id);
    this.stored.delete(id);
    this.added.delete(id);
    if (had) this.removed.add(id);
    return had;
  }

  /** Every blob id the state knows. */
  ids(): string[] {
    return [...new Set([...this.pending.keys(), ...this.stored])];
  }

  get size(): number {
    return this.ids().length;
  }

  clear(): void {
    this.pending.clear();
    this.stored.clear();
    this.added.clear();
    this.removed.clear();
  }

  /** Records a blob that is already on disk (loading). */
  adopt(id: string): void {
    this.stored.add(id);
  }

  /** The ids added and removed since the last call, for the change log. */
  takeChanges(): { added: string[]; removed: string[] } | null {
    if (this.added.size === 0 && this.removed.size === 0) return null;
    const changes = { added: [...this.added], removed: [...this.removed] };
    this.added.clear();
    this.removed.clear();
    return changes;
  }

  /** Writes every blob held in memory to its file with fsync, so that a log record naming it can follow. */
  async writePending(): Promise<void> {
    if (this.folder !== null) {
      for (const [id, bytes] of [...this.pending]) {
        await writeDurably(join(this.folder, id), bytes);
        // Deleted while it was being written: the file goes at the next compaction.
        if (this.pending.get(id) !== bytes) continue;
        this.pending.delete(id);
        this.stored.add(id);
      }
    }
  }
}

/** Writes a whole file, created 0600, and syncs it to disk before returning. */
export async function writeDurably(file: string, bytes: Buffer | string): Promise<void> {
  const handle = await open(file, 'w', 0o600);
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
}
