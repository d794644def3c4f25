import type { Command } from './command.ts';

/**
 * One line of the command table: what `--help` lists, and how to load the command. A command's
 * code (and the library it calls: the sandbox, the mapping compiler, the importer ...) is imported
 * only when that command runs, so that `--help` and `--version` start at once.
 *
 * Adding a command: a module exporting a `Command` (see command.ts), and one entry here.
 */
export interface CommandEntry {
  /** Words that select the command, e.g. `sandbox` or `auth login`. */
  name: string;
  summary: string;
  load(): Promise<Command>;
}

/** The command table: every command crm-ferry knows, in the order `--help` lists them. */
export const commands: CommandEntry[] = [
  {
    name: 'sandbox',
    summary: 'run the local copy of the CRM service',
    load: async () => (await import('./sandbox.ts')).sandboxCommand,
  },
  {
    name: 'inspect',
    summary: 'show the format, columns, samples and errors of a source file',
    load: async () => (await import('./inspect.ts')).inspectCommand,
  },
  {
    name: 'mapping init',
    summary: "draft a mapping file from a source file's columns",
    load: async () => (await import('./mapping.ts')).mappingInitCommand,
  },
  {
    name: 'mapping schema',
    summary: 'write the JSON Schema of mapping files, for editors',
    load: async () => (await import('./mapping.ts')).mappingSchemaCommand,
  },
  {
    name: 'validate',
    summary: 'map every row of an input (or of a whole plan) without writing, and write the rejects',
    load: async () => (await import('./validate.ts')).validateCommand,
  },
  {
    name: 'import',
    summary: 'write the rows of one file into the account, exactly once, resumable',
    load: async () => (await import('./import.ts')).importCommand,
  },
  {
    name: 'run',
    summary: 'write every step of a migration plan into the account, exactly once, resumable',
    load: async () => (await import('./import.ts')).runCommand,
  },
  {
    name: 'setup',
    summary:
      'create the pipelines, milestones, activity types and track definitions a plan needs; list what cannot be created',
    load: async () => (await import('./import.ts')).setupCommand,
  },
  {
    name: 'rollback',
    summary: 'undo the last import run kept in a state folder',
    load: async () => (await import('./import.ts')).rollbackCommand,
  },
  {
    name: 'verify',
    summary: 'compare the account with the source of a run: missing, extra, differing records, links unresolved',
    load: async () => (await import('./verify.ts')).verifyCommand,
  },
  {
    name: 'export',
    summary: "export records (all, or a filter's result) to CSV, XLSX or JSON Lines; nightly incremental exports",
    load: async () => (await import('./export.ts')).exportCommand,
  },
  {
    name: 'backup',
    summary: 'write the whole account into a folder (JSON Lines, attachments, manifest); resumable, incremental',
    load: async () => (await import('./backup.ts')).backupCommand,
  },
  {
    name: 'restore',
    summary:
      'write a backup folder into another account through the importer: ids remapped, links made again, exactly once',
    load: async () => (await import('./restore.ts')).restoreCommand,
  },
  {
    name: 'enqueue',
    summary:
      'put a job (a run, an import, an export, a backup) in the queue of a PostgreSQL state store, or list the queue',
    load: async () => (await import('./worker.ts')).enqueueCommand,
  },
  {
    name: 'worker',
    summary: "take jobs from the state store's queue and run them; a killed worker's job is resumed by another",
    load: async () => (await import('./worker.ts')).workerCommand,
  },
  {
    name: 'workbench',
    summary:
      "a customer's migration in the browser: files, mappings, check, run, verify, undo, on the same files and engine",
    load: async () => (await import('./workbench.ts')).workbenchCommand,
  },
  {
    name: 'api',
    summary: 'send an authenticated request to the service (like `gh api`)',
    load: async () => (await import('./api.ts')).apiCommand,
  },
  {
    name: 'auth login',
    summary: 'log in with OAuth and store the tokens',
    load: async () => (await import('./auth.ts')).authLoginCommand,
  },
  {
    name: 'auth status',
    summary: 'show which account and scope the stored login has',
    load: async () => (await import('./auth.ts')).authStatusCommand,
  },
  {
    name: 'auth logout',
    summary: 'revoke the stored login and delete its tokens',
    load: async () => (await import('./auth.ts')).authLogoutCommand,
  },
  {
    name: 'completion',
    summary: 'print the bash or zsh script that completes commands and options',
    load: async () => (await import('./completion.ts')).completionCommand,
  },
];

/** What the first word of two-word commands stands for, in the command list of `--help`. */
export const commandGroups: Record<string, string> = {
  mapping: 'draft a mapping file (init), or write the JSON Schema of mapping files (schema)',
  auth: 'log in with OAuth (login), show the stored login (status), end it (logout)',
};
