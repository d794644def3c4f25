/**
 * The backup folder's format (docs/backup.md describes it for other tools): one JSON Lines file per
 * kind of record, the attachment files, and manifest.json, written last, which says the folder is
 * a complete backup and holds the count and SHA-256 of every file. The manifest and the lines a
 * restore reads are zod schemas here, their types inferred: the backup writes them, the restore
 * checks them, with one declaration.
 */
import { z } from 'zod';

/** `format` of manifest.json. */
export const BACKUP_FORMAT = 'crm-ferry-backup';
export const BACKUP_VERSION = 1;

export const MANIFEST_FILE = 'manifest.json';
/** The state of a backup under way; gone once the manifest is written. */
export const PROGRESS_FILE = '.backup-progress.json';
/** Pages read by a backup under way, before they are committed to the files of the folder. */
export const WORK_FOLDER = '.work';
/** Held by the backup writing the folder. */
export const LOCK_FILE = '.backup.lock';
export const ATTACHMENTS_FOLDER = 'attachments';
/** Mode of every file of a backup (its folders are 0700): a backup holds a whole account. */
export const BACKUP_FILE_MODE = 0o600;

/** Entities the interface lists by `since`, with a `/deleted` list. */
export const SINCE_ENTITIES = ['parties', 'opportunities', 'kases'] as const;
export type SinceEntity = (typeof SINCE_ENTITIES)[number];

const count = z.number().int().min(0);
const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 in 64 lower-case hexadecimal digits');
const id = z.number().int().positive();

/** One file of the folder, as the manifest lists it. */
export const manifestFileSchema = z.object({
  /** Lines (records) in the file. */
  records: count,
  bytes: count,
  sha256,
});
export type ManifestFile = z.output<typeof manifestFileSchema>;

/**
 * A JSON Lines file of the folder as the manifest names it: a plain name ending in `.jsonl`, never
 * a path (the restore opens only the files the manifest lists, and only inside the folder).
 */
export const BACKUP_FILE_NAME = /^[a-z][a-z0-9-]*\.jsonl$/;

export const manifestSchema = z.object({
  format: z.literal(BACKUP_FORMAT),
  version: z.literal(BACKUP_VERSION),
  /** The account the backup was read from (its address, or its subdomain and address). */
  account: z.string(),
  /** When the backup that completed began: the next `--since auto` asks for changes since then (less 5 minutes). */
  startedAt: z.string(),
  completedAt: z.string(),
  /** null for a full read; the time asked for as `since` when this run read only the changes. */
  since: z.string().nullable(),
  /** Every JSON Lines file, by name (relative to the folder). */
  files: z.record(z.string(), manifestFileSchema).superRefine((files, context) => {
    for (const name of Object.keys(files)) {
      if (!BACKUP_FILE_NAME.test(name))
        context.addIssue({
          code: 'custom',
          message: `${JSON.stringify(name)} is not a file name of the folder (such as "parties.jsonl"), and a backup lists no path`,
        });
    }
  }),
  /** Attachment files under attachments/: how many and their bytes (each file's SHA-256 is in attachments.jsonl). */
  attachments: z.object({ files: count, bytes: count }),
  /** Records the service listed as deleted since `since`, removed from the files by this run. */
  deleted: z.object({ parties: count, opportunities: count, kases: count }),
  /** Requests this run sent (the resumed parts included). */
  requests: count,
});
export type Manifest = z.output<typeof manifestSchema>;

/** A line of attachments.jsonl: an attachment file under attachments/ and the entry it belongs to. */
export const attachmentLineSchema = z.object({
  id,
  entryId: id,
  filename: z.string(),
  contentType: z.string().nullable(),
  bytes: count,
  sha256,
  /** Relative to the folder: `attachments/ID`. */
  file: z.string().min(1),
});
export type AttachmentLine = z.output<typeof attachmentLineSchema>;

/** A line of kase-parties.jsonl: an additional party of a project. */
export const kasePartyLineSchema = z.object({ kase: z.object({ id }), party: z.object({ id }) });
export type KasePartyLine = z.output<typeof kasePartyLineSchema>;

/** A line of tracks.jsonl: a track as the interface returns it and the record it is applied to. */
export const trackLineSchema = z.object({
  appliedTo: z.object({ entity: z.enum(SINCE_ENTITIES), id }),
  track: z.looseObject({ description: z.string(), trackDateOn: z.string().nullable().optional() }),
});
export type TrackLine = z.output<typeof trackLineSchema>;

/** A line of deleted.jsonl (incremental runs): a record deleted in the account since `since`. */
export interface DeletedLine {
  entity: SinceEntity;
  id: number;
  deletedAt: string;
}
