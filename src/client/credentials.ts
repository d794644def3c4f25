import { chmod, readFile, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { FerryError } from '../errors/index.ts';
import { jsonText, writeFileAtomic } from '../files/index.ts';
import { makeFolders } from '../util/index.ts';

export const storedProfileSchema = z.object({
  baseUrl: z.string().url(),
  clientId: z.string(),
  /** Empty for an installed application. */
  clientSecret: z.string().default(''),
  accessToken: z.string(),
  refreshToken: z.string(),
  /** When the access token expires, ms since the epoch. */
  expiresAt: z.number(),
  /** When it was issued, ms since the epoch (older files lack it). */
  issuedAt: z.number().optional(),
  scope: z.string(),
  subdomain: z.string().optional(),
});
export type StoredProfile = z.infer<typeof storedProfileSchema>;

const fileSchema = z.object({ version: z.literal(1), profiles: z.record(z.string(), storedProfileSchema) });

/** `$XDG_CONFIG_HOME/crm-ferry/credentials.json`, or `~/.config/crm-ferry/credentials.json`. */
export function defaultCredentialsPath(env: NodeJS.ProcessEnv): string {
  const base =
    env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : join(env.HOME ?? homedir(), '.config');
  return join(base, 'crm-ferry', 'credentials.json');
}

/**
 * OAuth tokens on disk, one profile per account. The file is readable by its owner only (0600)
 * and every change replaces it atomically, so a rotated refresh token is never half-written.
 */
export class CredentialStore {
  constructor(readonly file: string) {}

  private async readAll(): Promise<z.infer<typeof fileSchema>> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, profiles: {} };
      throw new FerryError('CONFIG_INVALID', `cannot read the credentials file: ${(error as Error).message}`, {
        location: { file: this.file },
      });
    }
    try {
      return fileSchema.parse(JSON.parse(text));
    } catch (error) {
      throw new FerryError('CONFIG_INVALID', 'the credentials file is damaged', {
        location: { file: this.file },
        cause: error,
        hint: 'Delete it and log in again with `crm-ferry auth login`.',
      });
    }
  }

  async get(profile: string): Promise<StoredProfile | undefined> {
    return (await this.readAll()).profiles[profile];
  }

  async list(): Promise<Record<string, StoredProfile>> {
    return (await this.readAll()).profiles;
  }

  async put(profile: string, value: StoredProfile): Promise<void> {
    const all = await this.readAll();
    all.profiles[profile] = value;
    await this.write(all);
  }

  async remove(profile: string): Promise<boolean> {
    const all = await this.readAll();
    if (!(profile in all.profiles)) return false;
    delete all.profiles[profile];
    if (Object.keys(all.profiles).length === 0) await rm(this.file, { force: true });
    else await this.write(all);
    return true;
  }

  private async write(all: z.infer<typeof fileSchema>): Promise<void> {
    const folder = dirname(this.file);
    await makeFolders(folder, {
      mode: 0o700,
      what: 'the credentials folder',
      hint: 'Set XDG_CONFIG_HOME (or HOME) to an ordinary folder of yours.',
    });
    // The folder holds nothing but secrets: closed to others even if it was made before.
    await chmod(folder, 0o700);
    try {
      // A name of its own per write: two refreshes in one process must not share a temporary file.
      await writeFileAtomic(this.file, jsonText(all));
    } catch (error) {
      throw new FerryError('CONFIG_INVALID', `cannot write the credentials file: ${(error as Error).message}`, {
        location: { file: this.file },
        cause: error,
      });
    }
  }
}
