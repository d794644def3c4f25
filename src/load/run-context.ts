/**
 * One import run's context: what the run was given and the state its parts share, and the journal
 * side (the lines each step's journal gets, and the rows as the run has left them). The record
 * sender (record-sender.ts) and the engine that runs the steps (run-import.ts) are handed one.
 */
import { setMaxListeners } from 'node:events';
import { RecordService } from '../client/index.ts';
import { FerryError } from '../errors/index.ts';
import { blankRow, type JournalEntry, type RowState, type StateDir } from '../journal/index.ts';
import type { NameResolver } from '../mapping/index.ts';
import type { DryRunReport, ImportDeps, ImportEvent, ImportOptions } from './import-options.ts';
import type { StepRun } from './step-run.ts';
import { MadeByName } from './made-by-name.ts';
import { WriteSlots } from './write-slots.ts';

/** What a run is given: its options, dependencies, state folder, steps, names, id, clock and events. */
export interface RunSettings {
  options: ImportOptions;
  deps: ImportDeps;
  state: StateDir;
  steps: StepRun[];
  resolver: NameResolver;
  runId: string;
  now: () => Date;
  emit: (event: ImportEvent) => void;
}

/**
 * One import run as its parts see it (the record sender, the engine that runs the steps): what it
 * was given, the state they share (the stop signal, the write slots, the counts of reconciled
 * writes and of the dry run), and the journal side: every line of the steps' journals goes
 * through at, journal, record and fold.
 */
export class RunContext {
  readonly options: ImportOptions;
  readonly deps: ImportDeps;
  readonly state: StateDir;
  readonly steps: StepRun[];
  readonly resolver: NameResolver;
  readonly runId: string;
  readonly now: () => Date;
  readonly emit: (event: ImportEvent) => void;
  readonly service: RecordService;
  /** The write slots (`--concurrency`). */
  readonly slots: WriteSlots;
  /** Stops reading rows and sending: Ctrl-C, or an error that ends the run. */
  readonly halt = new AbortController();
  stopped: FerryError | null = null;
  interrupted = false;
  readonly reconciled = { applied: 0, notApplied: 0 };
  readonly dry: DryRunReport = {
    requests: 0,
    requestsForNames: 0,
    requestsForSetup: 0,
    lookUps: 0,
    lookUpValues: 0,
    limitPerHour: null,
    estimatedSeconds: null,
    samples: [],
  };
  readonly byName: Map<string, StepRun>;
  readonly started = Date.now();
  readonly requestsAtStart: number;
  unlisten: () => void = () => undefined;
  /** Ends the counting of rows (countRows) with the run. */
  readonly counting = new AbortController();
  /** Organisations the plan's runs made by name (made-by-name.ts). */
  readonly made: MadeByName;

  constructor(settings: RunSettings) {
    const { options, deps, steps } = settings;
    this.options = options;
    this.deps = deps;
    this.state = settings.state;
    this.steps = steps;
    this.resolver = settings.resolver;
    this.runId = settings.runId;
    this.now = settings.now;
    this.emit = settings.emit;
    // Every request under way listens on this signal: up to --concurrency writes, and a read for
    // each step that reads a live v1 account. More than ten at once is the design, not a leak, and
    // Node's warning about it would land in the consultant's terminal.
    setMaxListeners(options.concurrency + steps.length + 8, this.halt.signal);
    this.service = new RecordService(deps.client, this.halt.signal);
    this.requestsAtStart = deps.client.transport.requestsSent;
    this.slots = new WriteSlots(options.concurrency);
    this.byName = new Map(steps.map((s) => [s.name, s]));
    this.made = new MadeByName(steps);
    if (deps.signal) {
      const onAbort = (): void => {
        this.interrupted = true;
        this.halt.abort();
      };
      if (deps.signal.aborted) onAbort();
      else deps.signal.addEventListener('abort', onAbort, { once: true });
      // A caller running import after import under one signal keeps no listener per run.
      this.unlisten = () => deps.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** The time of a journal line, as ISO text: made once a millisecond (rows written together share it). */
  at(): string {
    const now = this.now();
    const ms = now.getTime();
    if (ms !== this.#atMs) {
      this.#atMs = ms;
      this.#atText = now.toISOString();
    }
    return this.#atText;
  }

  #atMs = Number.NaN;
  #atText = '';

  /** A journal line that must be on disk before what it announces happens. */
  async journal(step: StepRun, entry: JournalEntry): Promise<void> {
    await step.writer?.append(entry);
  }

  /**
   * A line written with the next group of the step's journal that something waits for, and
   * waited for later (`durable`): the intent of a create is queued as its row is read and made
   * durable when the row has its slot, so that one synchronised write covers the intents of the
   * rows behind it. Null in a dry run.
   */
  stage(step: StepRun, entry: JournalEntry): number | null {
    return step.writer?.enqueue(entry) ?? null;
  }

  /** Resolves once a staged line is on disk; nothing to wait for (undefined) when it is there already. */
  durable(step: StepRun, line: number | null): Promise<void> | undefined {
    if (line === null || !step.writer || step.writer.isDurable(line)) return undefined;
    return step.writer.durable(line);
  }

  /**
   * A result line. The row goes on without waiting for it to reach the disk, and no write is made
   * for it alone: it goes out with the next group (the next intent, the run's end, or a second
   * later). Its intent is on disk already, so a crash before the result is on disk leaves an
   * intent that the next run settles by looking the record up. A failed write stops the run.
   */
  record(step: StepRun, entry: JournalEntry): void {
    try {
      step.writer?.enqueue(entry);
    } catch (error) {
      this.fail(error);
    }
  }

  /** Ends the run on an error that is not about one row; the state stays for the re-run. */
  fail(error: unknown): void {
    if (this.stopped) return;
    // Stopping already (Ctrl-C): a wait cut short by it is how a row stops, not a failure.
    if (this.halt.signal.aborted && error instanceof Error && error.name === 'AbortError') return;
    this.stopped =
      error instanceof FerryError
        ? error
        : new FerryError('INTERNAL', `unexpected error: ${(error as Error)?.message ?? String(error)}`, {
            cause: error,
          });
    this.halt.abort();
  }

  /** Keeps the loaded journal in step with what this run appends. */
  fold(step: StepRun, key: string, change: Partial<RowState>): void {
    let row = step.journal.rows.get(key);
    if (!row) {
      row = blankRow(key);
      step.journal.rows.set(key, row);
    }
    // In place: a row read from disk keeps its body as text until asked for (see the journal).
    Object.assign(row, change);
  }

  /** A dry run sends nothing, so it cannot know what the service would refuse: its rejects are not the last run's. */
  rejectsFile(step: StepRun): string {
    return this.state.resultFile(step.name, this.options.dryRun ? 'dry-run.rejects' : 'rejects');
  }
}
