/**
 * The one link a restore makes itself: the tracks of parties, which the interface takes on no
 * party's create (projects and opportunities take theirs on create, through their mappings). A
 * track goes on a party this restore created, one write each, with its description and start
 * date; a party found in the account keeps its own tracks. Each write is journaled in the state
 * folder (`journal/_tracks.jsonl`, beside the set-up's) before it is sent and after it is
 * answered, so a restore run again adds none twice: only a write whose answer was lost is looked
 * for, among the party's tracks.
 */
import { type CrmClient, RecordService } from '../client/index.ts';
import { type AccountIdentity, StateDir, type StateStoreOptions } from '../journal/index.ts';
import type { AccountCatalog } from '../mapping/index.ts';
import type { TrackLine } from './format.ts';

export interface PartyTracksResult {
  /** Tracks applied by this run. */
  applied: number;
  /** On parties the restore found in the account, which keep their own. */
  onFound: number;
  /** Whose party was not restored (rejected), or whose definition the account lacks. */
  unresolved: number;
}

export interface PartyTracksDeps {
  client: CrmClient;
  account: AccountIdentity;
  stateDir: string;
  /** Where the state is kept besides the folder. @default the folder alone */
  stateStore?: StateStoreOptions | null | undefined;
  /** The account's names, its track definitions among them. */
  catalog: AccountCatalog;
  /** The parties of the restore's journals by their backed-up id: the target's id and whether the restore created it. */
  parties: ReadonlyMap<number, { id: number; matched: boolean }>;
  signal?: AbortSignal;
  now?: () => Date;
}

/** The journal's key of a track: the party it is applied to in the backup, and the track's id there. */
const keyOf = (line: TrackLine): string =>
  `${line.appliedTo.id}/${String(line.track.id ?? `${line.track.description}@${String(line.track.trackDateOn ?? '')}`)}`;

/** Applies the tracks of the backup's parties (see the top of this file). */
export async function restorePartyTracks(
  lines: readonly TrackLine[],
  deps: PartyTracksDeps,
): Promise<PartyTracksResult> {
  const result: PartyTracksResult = { applied: 0, onFound: 0, unresolved: 0 };
  if (lines.length === 0) return result;
  const now = deps.now ?? (() => new Date());
  const definitions = new Map(deps.catalog.trackDefinitions.map((d) => [d.name.toLowerCase(), d.id]));
  const state = await StateDir.open({
    dir: deps.stateDir,
    account: deps.account,
    users: async () => deps.catalog.users.map((u) => u.id),
    store: deps.stateStore ?? undefined,
  });
  try {
    const journal = await state.loadJournal('_tracks');
    const writer = await state.openJournal('_tracks', journal);
    const run = state.newRunId();
    try {
      for (const line of lines) {
        deps.signal?.throwIfAborted();
        const party = deps.parties.get(line.appliedTo.id);
        const definition = definitions.get(line.track.description.toLowerCase());
        if (party === undefined || definition === undefined) {
          result.unresolved += 1;
          continue;
        }
        if (party.matched) {
          result.onFound += 1;
          continue;
        }
        const key = keyOf(line);
        const row = journal.rows.get(key);
        if (row?.id !== undefined && row.id !== null) continue;
        const body = {
          definition,
          description: line.track.description,
          ...(line.track.trackDateOn ? { trackDateOn: line.track.trackDateOn } : {}),
          party: { id: party.id },
        };
        // Sent before and its answer lost: the party's tracks say whether it was applied.
        if (row?.pending) {
          let found: number | undefined;
          for await (const track of deps.client.tracksOf('parties', party.id)) {
            if (
              track.description === body.description &&
              (track as { trackDateOn?: unknown }).trackDateOn === (body.trackDateOn ?? track.trackDateOn)
            )
              found = track.id;
          }
          if (found !== undefined) {
            await writer.append({
              t: 'done',
              k: key,
              op: 'create',
              run: row.pending.run,
              at: now().toISOString(),
              id: found,
              fp: '',
              origin: 'created',
            });
            continue;
          }
        }
        await writer.append({ t: 'intent', k: key, op: 'create', run, at: now().toISOString(), fp: '', body });
        const id = await new RecordService(deps.client).applyTrack(body);
        await writer.append({
          t: 'done',
          k: key,
          op: 'create',
          run,
          at: now().toISOString(),
          id,
          fp: '',
          origin: 'created',
        });
        result.applied += 1;
      }
    } finally {
      await writer.close();
    }
  } finally {
    await state.close();
  }
  return result;
}
