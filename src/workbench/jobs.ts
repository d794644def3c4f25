/**
 * The one job the workbench runs at a time (a check, a run, a verify or an undo), held by the
 * server and not by the page: closing the tab leaves it running, and a page opened later sees it.
 * One at a time because they share the state folder, whose lock would refuse a second anyway.
 */
import { FerryError } from '../errors/index.ts';
import type { JobKind, JobsView, JobView, RunProgress } from './api.ts';

export interface JobContext {
  signal: AbortSignal;
  /** Shows progress (sent to the pages at most a few times a second). */
  progress(progress: RunProgress): void;
  /** Sets the job's result fields. */
  result(fields: Partial<Pick<JobView, 'check' | 'run' | 'verify' | 'undo'>>): void;
}

/** How often the pages are told of progress at most. */
const TELL_EVERY_MS = 200;

export class Jobs {
  #next = 1;
  #current: { view: JobView; controller: AbortController; done: Promise<void> } | null = null;
  readonly #last: Partial<Record<JobKind, JobView>> = {};
  readonly #listeners = new Set<(view: JobsView) => void>();
  #told = 0;
  #pending: NodeJS.Timeout | null = null;

  constructor(
    private readonly now: () => Date = () => new Date(),
    /** What the page is told of a job's error: the server's rule (no stack, no server path). */
    private readonly describe: (error: unknown) => { code: string; message: string } = (error) =>
      error instanceof FerryError
        ? { code: error.code, message: error.hint ? `${error.message}. ${error.hint}` : error.message }
        : { code: 'INTERNAL', message: 'this is a bug in crm-ferry; please report it' },
  ) {}

  view(): JobsView {
    return { current: this.#current ? structuredClone(this.#current.view) : null, last: structuredClone(this.#last) };
  }

  /** Listens to every change; returns the function that stops listening. */
  listen(listener: (view: JobsView) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #tell(now = false): void {
    const send = (): void => {
      this.#pending = null;
      this.#told = Date.now();
      const view = this.view();
      for (const listener of this.#listeners) listener(view);
    };
    if (now || Date.now() - this.#told >= TELL_EVERY_MS) {
      if (this.#pending) clearTimeout(this.#pending);
      send();
    } else this.#pending ??= setTimeout(send, TELL_EVERY_MS);
  }

  /**
   * Starts a job, or refuses (USAGE) while one is under way. `work` gets the job's signal (Stop
   * aborts it, as Ctrl-C does on the command line) and reports through the context.
   */
  start(kind: JobKind, limit: number | null, work: (context: JobContext) => Promise<void>): JobView {
    if (this.#current) {
      throw new FerryError('USAGE', `a ${this.#current.view.kind} is under way; wait for it to end, or stop it`, {
        hint: 'The Run view shows it, with its Stop button.',
      });
    }
    const controller = new AbortController();
    const view: JobView = {
      id: this.#next++,
      kind,
      limit,
      state: 'running',
      startedAt: this.now().toISOString(),
      progress: null,
      error: null,
      check: null,
      run: null,
      verify: null,
      undo: null,
    };
    const context: JobContext = {
      signal: controller.signal,
      progress: (progress) => {
        view.progress = progress;
        this.#tell();
      },
      result: (fields) => {
        Object.assign(view, fields);
        this.#tell(true);
      },
    };
    const done = (async () => {
      try {
        await work(context);
        view.state = 'finished';
      } catch (error) {
        view.state = 'failed';
        view.error = this.describe(error);
      } finally {
        this.#last[kind] = view;
        this.#current = null;
        this.#tell(true);
      }
    })();
    this.#current = { view, controller, done };
    this.#tell(true);
    return structuredClone(view);
  }

  /** Asks the job under way to stop, as Ctrl-C does: requests under way finish, the state is kept. */
  stop(): boolean {
    if (!this.#current) return false;
    this.#current.view.state = 'stopping';
    this.#current.controller.abort();
    this.#tell(true);
    return true;
  }

  /** Waits for the job under way, if any (closing the server). */
  async settled(): Promise<void> {
    await this.#current?.done;
  }
}
