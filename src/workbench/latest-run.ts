/**
 * The latest run of a project folder's state, read from what every run leaves there (the steps'
 * journals, the rollbacks done, the rejects files): the same whether the page, an earlier
 * workbench or `crm-ferry run plan.yaml` in the folder started it. Read without the state's lock:
 * it only reads, and a run under way shows as started and not ended.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { readJournal, readRollbacks } from '../journal/index.ts';
import { openSource } from '../sources/index.ts';
import type { LatestRunView, RejectView } from './api.ts';
import { forPage } from './reasons.ts';

/** Rejected rows the Run and Check views list per step; the rejects file has them all. */
export const REJECTS_SHOWN = 100;

/** A journal's file name back to its step: the state folder hex-escapes what a file name cannot hold. */
function stepOfFile(name: string): string {
  return name
    .replace(/\.jsonl$/, '')
    .replace(/%([0-9a-f]+)/g, (_all, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16)));
}

/** A field the page shows: a target (`lastName`), but not the place of a rule in the mapping (`fields[3]`). */
export function fieldForPage(field: string): string {
  return /^(?:fields|key|match|skip)(?:\[|\.|$)/.test(field) ? '' : field;
}

/** The first rows of a rejects file, each with its reason (the file's `_message`, reasonText's words). */
export async function rejectsOf(file: string): Promise<RejectView[]> {
  const out: RejectView[] = [];
  const opened = await openSource(file, { format: 'csv' });
  try {
    for await (const item of opened.items) {
      if (item.kind !== 'row') continue;
      const v = item.values;
      out.push({
        row: Number(v._row),
        field: fieldForPage(String(v._field ?? '')),
        reason: forPage(String(v._message ?? '')),
      });
      if (out.length >= REJECTS_SHOWN) break;
    }
  } finally {
    await opened.items.return?.(undefined);
  }
  return out;
}

interface StepTally {
  step: string;
  file: string;
  created: number;
  updated: number;
  rejected: Set<string>;
}

/**
 * The latest run of the state in `stateDir`: its steps' counts and rejected rows, and whether it
 * ended, was stopped before its end, or was undone since. `pageRuns`: the runs this workbench
 * started; `shown`: a path as the page names it.
 */
export async function latestRun(
  stateDir: string,
  pageRuns: ReadonlySet<string>,
  shown: (path: string) => string,
): Promise<LatestRunView> {
  const none: LatestRunView = { id: null, state: 'none', fromPage: false, startedAt: null, endedAt: null, steps: [] };
  const files = (await readdir(join(stateDir, 'journal')).catch(() => [] as string[]))
    .filter((name) => name.endsWith('.jsonl'))
    .sort();
  // The journals are read twice: first for the latest run's id, then for what it did. A folder's
  // journals are the customer's files, a few thousand lines each.
  let latest: string | null = null;
  for (const file of files) {
    for await (const entry of readJournal(join(stateDir, 'journal', file))) {
      if (
        entry.t === 'run' &&
        entry.event === 'start' &&
        !entry.run.startsWith('rollback-') &&
        (latest === null || entry.run > latest)
      )
        latest = entry.run;
    }
  }
  if (latest === null) return none;
  const times: { startedAt: string | null; endedAt: string | null; interrupted: boolean } = {
    startedAt: null,
    endedAt: null,
    interrupted: false,
  };
  const tallies: StepTally[] = [];
  for (const file of files) {
    const tally: StepTally = { step: stepOfFile(file), file, created: 0, updated: 0, rejected: new Set() };
    let took = false;
    for await (const entry of readJournal(join(stateDir, 'journal', file))) {
      if (entry.run !== latest) continue;
      took = true;
      if (entry.t === 'run') {
        if (entry.event === 'start') times.startedAt ??= entry.at;
        else {
          if (times.endedAt === null || entry.at > times.endedAt) times.endedAt = entry.at;
          times.interrupted ||= entry.event === 'interrupted';
        }
      } else if (entry.t === 'done' && entry.op === 'create') tally.created += 1;
      else if (entry.t === 'done' && entry.op === 'update') tally.updated += 1;
      else if (entry.t === 'reject') tally.rejected.add(entry.k);
      else if (entry.t === 'done') tally.rejected.delete(entry.k);
    }
    if (took) tallies.push(tally);
  }
  const undone = (await readRollbacks(stateDir).catch(() => ({ undone: [] as string[] }))).undone.includes(latest);
  const steps: LatestRunView['steps'] = [];
  for (const tally of tallies) {
    // The rejects file is the last real run's: it is the latest run's when that run rejected rows.
    const rejectsPath = join(stateDir, 'results', tally.file.replace(/\.jsonl$/, '.rejects.csv'));
    const rejects = tally.rejected.size > 0 && !undone ? await rejectsOf(rejectsPath).catch(() => null) : null;
    steps.push({
      step: tally.step,
      created: tally.created,
      updated: tally.updated,
      rejected: tally.rejected.size,
      rejects: rejects ?? [],
      rejectsFile: rejects === null ? null : shown(rejectsPath),
    });
  }
  return {
    id: latest,
    state: undone ? 'undone' : times.endedAt === null ? 'going' : times.interrupted ? 'interrupted' : 'finished',
    fromPage: pageRuns.has(latest),
    startedAt: times.startedAt,
    endedAt: times.endedAt,
    steps,
  };
}
