/**
 * Kills a sandbox with a data file (`kill -9`) while a client writes to it as fast as it can,
 * restarts it, and checks that every acknowledged write survived: the crash test in the suite and
 * `npm run bench -- sandbox-chaos` share it.
 */
import { type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { seededRandom } from '../../src/util/seeded-random.ts';
import { killSandboxProcess, startSandboxProcess } from './sandbox-process.ts';

const TOKEN = 'crash-test-token-1';

export interface CrashOptions {
  /** Folder for the data file; the caller removes it. */
  dir: string;
  rounds: number;
  /** Concurrent writers. */
  writers: number;
  /** The kill comes this many milliseconds after writing starts, uniformly at random in the range. */
  killAfterMs: [number, number];
  seed: number;
}

export interface CrashFigures {
  rounds: number;
  /** Writes answered 2xx (creates, updates, uploads, entries with an attachment). */
  acknowledged: { creates: number; updates: number; uploads: number; attachments: number };
  /** Acknowledged writes checked after the restarts (every one, at least once). */
  checked: number;
  /** Writes in flight at a kill (their outcome is either). */
  inFlightAtKill: number;
  /** Problems found: lost or changed acknowledged writes, ids given twice, temporary files left. */
  problems: string[];
  /** Mean time from spawn to a listening sandbox, in milliseconds. */
  meanRestartMs: number;
}

interface PartyState {
  id: number;
  name: string;
  about: string | null;
  /** An update sent but not answered when the sandbox died: either value may be stored. */
  maybe: string | null;
}

interface Attached {
  attachmentId: number;
  sha: string;
}

function sha(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Runs the rounds and returns what was seen; `problems` is empty when every promise was kept. */
export async function runCrashRounds(options: CrashOptions): Promise<CrashFigures> {
  const file = join(options.dir, 'state.json');
  const random = seededRandom(options.seed);
  const parties = new Map<number, PartyState>();
  const attached: Attached[] = [];
  /** `spent`: an entry using it was in flight at the kill, so it may have been used up. */
  const unattached: { token: string; sha: string; spent: boolean }[] = [];
  const ids = new Set<number>();
  const problems: string[] = [];
  const acknowledged = { creates: 0, updates: 0, uploads: 0, attachments: 0 };
  let inFlightAtKill = 0;
  let restartMs = 0;
  let restarts = 0;
  let serial = 0;

  const newId = (id: unknown, what: string): number => {
    if (typeof id !== 'number') throw new Error(`${what} answered without an id`);
    if (ids.has(id)) problems.push(`id ${id} was given twice (${what})`);
    ids.add(id);
    return id;
  };

  const start = async (): Promise<{ child: ChildProcess; url: string; agent: Agent }> => {
    const began = performance.now();
    const started = await startSandboxProcess(file, TOKEN);
    restartMs += performance.now() - began;
    restarts += 1;
    return { ...started, agent: new Agent({ connections: options.writers * 2 }) };
  };

  const call = async (
    agent: Agent,
    url: string,
    method: string,
    path: string,
    body?: unknown,
    raw?: Buffer,
    headers: Record<string, string> = {},
  ) => {
    const answer = await request(`${url}/api/v2${path}`, {
      method: method as 'GET',
      dispatcher: agent,
      headers: {
        authorization: `Bearer ${TOKEN}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    const bytes = Buffer.from(await answer.body.arrayBuffer());
    return { status: answer.statusCode, bytes, json: () => JSON.parse(bytes.toString('utf8')) };
  };

  /** Checks acknowledged writes against a running sandbox. */
  const check = async (
    agent: Agent,
    url: string,
    which: { parties: PartyState[]; attached: Attached[] },
  ): Promise<number> => {
    let checked = 0;
    for (const party of which.parties) {
      const answer = await call(agent, url, 'GET', `/parties/${party.id}`);
      checked += 1;
      if (answer.status !== 200) {
        problems.push(`acknowledged party ${party.id} (${party.name}) is gone: ${answer.status}`);
        continue;
      }
      const stored = answer.json().party as { name: string; about: string | null };
      if (stored.name !== party.name)
        problems.push(`party ${party.id} is named ${stored.name}, acknowledged ${party.name}`);
      const about = stored.about ?? null;
      if (about !== party.about && about !== party.maybe) {
        problems.push(
          `party ${party.id} has about ${JSON.stringify(about)}, acknowledged ${JSON.stringify(party.about)}`,
        );
      }
      // What is stored now is what the next round starts from.
      party.about = about;
      party.maybe = null;
    }
    for (const item of which.attached) {
      const answer = await call(agent, url, 'GET', `/attachments/${item.attachmentId}`);
      checked += 1;
      if (answer.status !== 200)
        problems.push(`acknowledged attachment ${item.attachmentId} is gone: ${answer.status}`);
      else if (sha(answer.bytes) !== item.sha)
        problems.push(`attachment ${item.attachmentId} has other bytes than were acknowledged`);
    }
    // Uploads acknowledged but not yet attached: attaching them now proves the bytes survived.
    const anyParty = [...parties.values()][0];
    for (const upload of unattached.splice(0)) {
      checked += 1;
      if (!anyParty) break;
      const entry = await call(agent, url, 'POST', '/entries', {
        entry: { type: 'note', party: { id: anyParty.id }, content: 'late', attachments: [{ token: upload.token }] },
      });
      if (entry.status !== 201) {
        if (upload.spent && entry.status === 422) continue;
        problems.push(
          `acknowledged upload ${upload.token.slice(0, 6)}... cannot be attached: ${entry.status} ${entry.bytes.toString()}`,
        );
        continue;
      }
      const body = entry.json().entry as { id: number; attachments: { id: number }[] };
      newId(body.id, 'entry');
      const attachmentId = newId(body.attachments[0]?.id, 'attachment');
      const read = await call(agent, url, 'GET', `/attachments/${attachmentId}`);
      if (sha(read.bytes) !== upload.sha)
        problems.push(`acknowledged upload ${upload.token.slice(0, 6)}... came back with other bytes`);
      attached.push({ attachmentId, sha: upload.sha });
    }
    const left = (await readdir(options.dir, { recursive: true })).filter((name) => String(name).endsWith('.tmp'));
    if (left.length > 0) problems.push(`temporary files left: ${left.join(', ')}`);
    return checked;
  };

  let checked = 0;
  let lastRound: { parties: PartyState[]; attached: Attached[] } = { parties: [], attached: [] };
  for (let round = 0; round < options.rounds; round += 1) {
    const { child, url, agent } = await start();
    const roundParties: PartyState[] = [];
    const roundAttached: Attached[] = [];
    if (round > 0) {
      // Every write acknowledged in the round before the kill (and uploads never attached).
      checked += await check(agent, url, { parties: lastRound.parties, attached: lastRound.attached });
    }
    let dead = false;
    const writer = async (w: number): Promise<void> => {
      const own: PartyState[] = [];
      while (!dead) {
        const pick = random();
        let inFlight: PartyState | null = null;
        try {
          if (pick < 0.5 || own.length === 0) {
            serial += 1;
            const name = `Crash ${round}-${w}-${serial}`;
            const answer = await call(agent, url, 'POST', '/parties', { party: { type: 'organisation', name } });
            if (answer.status !== 201) throw new Error(`create answered ${answer.status}: ${answer.bytes.toString()}`);
            const party: PartyState = { id: newId(answer.json().party.id, 'party'), name, about: null, maybe: null };
            acknowledged.creates += 1;
            parties.set(party.id, party);
            own.push(party);
            roundParties.push(party);
          } else if (pick < 0.8) {
            const party = own[Math.floor(random() * own.length)] as PartyState;
            serial += 1;
            const about = `revision ${serial}`;
            party.maybe = about;
            inFlight = party;
            const answer = await call(agent, url, 'PUT', `/parties/${party.id}`, { party: { about } });
            if (answer.status !== 200) throw new Error(`update answered ${answer.status}: ${answer.bytes.toString()}`);
            party.about = about;
            party.maybe = null;
            inFlight = null;
            acknowledged.updates += 1;
            if (!roundParties.includes(party)) roundParties.push(party);
          } else {
            const size = 1 + Math.floor(random() * 64 * 1024);
            const bytes = Buffer.alloc(size, `${round}:${w}:${serial}:`);
            const upload = await call(agent, url, 'POST', '/attachments/upload', undefined, bytes, {
              'content-type': 'application/octet-stream',
              'x-attachment-filename': `crash-${serial}.bin`,
            });
            if (upload.status !== 200 && upload.status !== 201) throw new Error(`upload answered ${upload.status}`);
            acknowledged.uploads += 1;
            const token = upload.json().upload.token as string;
            const pending = { token, sha: sha(bytes), spent: false };
            unattached.push(pending);
            const party = own[Math.floor(random() * own.length)] as PartyState;
            pending.spent = true;
            const entry = await call(agent, url, 'POST', '/entries', {
              entry: { type: 'note', party: { id: party.id }, content: 'with a file', attachments: [{ token }] },
            });
            if (entry.status !== 201) throw new Error(`entry answered ${entry.status}: ${entry.bytes.toString()}`);
            unattached.splice(unattached.indexOf(pending), 1);
            const body = entry.json().entry as { id: number; attachments: { id: number }[] };
            newId(body.id, 'entry');
            const item = { attachmentId: newId(body.attachments[0]?.id, 'attachment'), sha: pending.sha };
            acknowledged.attachments += 1;
            attached.push(item);
            roundAttached.push(item);
          }
        } catch (error) {
          if (!dead) problems.push(`writer ${w}: ${(error as Error).message}`);
          if (inFlight) inFlightAtKill += 1;
          return;
        }
      }
    };
    const writers = Array.from({ length: options.writers }, (_, w) => writer(w));
    const [min, max] = options.killAfterMs;
    await new Promise((resolve) => setTimeout(resolve, min + random() * (max - min)));
    dead = true;
    await killSandboxProcess(child);
    await Promise.all(writers);
    await agent.close().catch(() => undefined);
    lastRound = { parties: roundParties, attached: roundAttached };
  }
  // A last restart checks everything acknowledged in all rounds, not only the last one.
  const { child, url, agent } = await start();
  try {
    checked += await check(agent, url, { parties: [...parties.values()], attached });
  } finally {
    await killSandboxProcess(child);
    await agent.close().catch(() => undefined);
  }
  return {
    rounds: options.rounds,
    acknowledged,
    checked,
    inFlightAtKill,
    problems,
    meanRestartMs: Math.round(restartMs / restarts),
  };
}
