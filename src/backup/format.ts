/**
 * The backup folder's format (docs/backup.md describes it for other tools): one JSON Lines file per
 * kind of record, the attachment files, and manifest.json, written last, which says the folder is
 * a complete backup and holds the count and SHA-256 of every file.
 */

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

/** Entities the interface lists by `since`, with a `/deleted` list. */
export const SINCE_ENTITIES = ['parties', 'opportunities', 'kases'] as const;
export type SinceEntity = (typeof SINCE_ENTITIES)[number];

/** One file of the folder, as the manifest lists it. */
export interface ManifestFile {
  /** Lines (records) in the file. */
  records: number;
  bytes: number;
  sha256: string;
}

export interface Manifest {
  format: typeof BACKUP_FORMAT;
  version: typeof BACKUP_VERSION;
  /** The account the backup was read from (its address, or its subdomain and address). */
  account: string;
  /** When the backup that completed began: the next `--since auto` asks for changes since then (less 5 minutes). */
  startedAt: string;
  completedAt: string;
  /** null for a full read; the time asked for as `since` when this run read only the changes. */
  since: string | null;
  /** Every JSON Lines file, by name (relative to the folder). */
  files: Record<string, ManifestFile>;
  /** Attachment files under attachments/: how many and their bytes (each file's SHA-256 is in attachments.jsonl). */
  attachments: { files: number; bytes: number };
  /** Records the service listed as deleted since `since`, removed from the files by this run. */
  deleted: Record<SinceEntity, number>;
  /** Requests this run sent (the resumed parts included). */
  requests: number;
}

/** A line of attachments.jsonl: an attachment file under attachments/ and the entry it belongs to. */
export interface AttachmentLine {
  id: number;
  entryId: number;
  filename: string;
  contentType: string | null;
  bytes: number;
  sha256: string;
  /** Relative to the folder: `attachments/ID`. */
  file: string;
}

/** A line of kase-parties.jsonl: an additional party of a project. */
export interface KasePartyLine {
  kase: { id: number };
  party: { id: number };
}

/** A line of tracks.jsonl: a track as the interface returns it and the record it is applied to. */
export interface TrackLine {
  appliedTo: { entity: SinceEntity; id: number };
  track: Record<string, unknown>;
}

/** A line of deleted.jsonl (incremental runs): a record deleted in the account since `since`. */
export interface DeletedLine {
  entity: SinceEntity;
  id: number;
  deletedAt: string;
}
