/**
 * The workbench's page: one view per step of a migration, each at its own address (Files, Map,
 * Check, Run, Verify, Undo). Written with preact (about 10 KiB): the views re-render from the
 * server's answers and the job's events, which plain DOM code would redo by hand in every view,
 * and nothing heavier is needed. Everything it loads comes from the workbench itself.
 */
import { type ComponentType, render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { JobsView, SessionView } from '../../src/workbench/api.ts';
import { CheckView } from './check.tsx';
import { FilesView } from './files.tsx';
import { get } from './http.ts';
import { MapView } from './map.tsx';
import { Link, ROUTES, type Route, routeOf, type ViewProps } from './router.tsx';
import { RunView } from './run.tsx';
import { UndoView } from './undo.tsx';
import { VerifyView } from './verify.tsx';

/** The view of each route: a route without a view does not compile. */
const VIEWS: Record<Route, ComponentType<ViewProps>> = {
  '/files': FilesView,
  '/map': (props) => <MapView key={props.query.get('input') ?? ''} {...props} />,
  '/check': CheckView,
  '/run': RunView,
  '/verify': VerifyView,
  '/undo': UndoView,
};

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const EMPTY_JOBS: JobsView = { current: null, last: {} };

function App() {
  const [location, setLocation] = useState(() => ({ path: window.location.pathname, search: window.location.search }));
  const [session, setSession] = useState<SessionView | null>(null);
  const [jobs, setJobs] = useState<JobsView>(EMPTY_JOBS);
  const [error, setError] = useState<string | null>(null);
  const [live, setLive] = useState<boolean>(false);
  // The address a change of view waits on while the question about unsaved work is open.
  const [leaving, setLeaving] = useState<string | null>(null);
  const work = useRef(false);
  const question = useRef<HTMLDialogElement>(null);
  const shown = useRef(`${location.path}${location.search}`);

  const refresh = (): void => {
    get<SessionView>('/api/session').then(setSession, (e: unknown) => setError(messageOf(e)));
  };
  useEffect(refresh, []);
  const show = (href: string): void => {
    const url = new URL(href, window.location.origin);
    shown.current = `${url.pathname}${url.search}`;
    setLocation({ path: url.pathname, search: url.search });
    setError(null);
    window.scrollTo(0, 0);
  };
  useEffect(() => {
    // Back and forward: with unsaved work, the address shown is put back until the person answers.
    const onPop = (): void => {
      const wanted = `${window.location.pathname}${window.location.search}`;
      if (work.current) {
        window.history.pushState(null, '', shown.current);
        setLeaving(wanted);
        return;
      }
      show(wanted);
    };
    // Closing the tab or reloading: the browser's own question.
    const onUnload = (event: BeforeUnloadEvent): void => {
      if (work.current) event.preventDefault();
    };
    window.addEventListener('popstate', onPop);
    window.addEventListener('beforeunload', onUnload);
    return () => {
      window.removeEventListener('popstate', onPop);
      window.removeEventListener('beforeunload', onUnload);
    };
  }, []);
  useEffect(() => {
    if (leaving !== null && question.current && !question.current.open) question.current.showModal();
  }, [leaving]);
  // The job's state, from the server: on connecting (a run started before the page opened), then on every change.
  useEffect(() => {
    const events = new EventSource('/api/events');
    events.onmessage = (event: MessageEvent<string>) => {
      setLive(true);
      setJobs(JSON.parse(event.data) as JobsView);
    };
    events.onerror = () => setLive(false);
    return () => events.close();
  }, []);

  const goNow = (href: string): void => {
    work.current = false;
    window.history.pushState(null, '', href);
    show(href);
  };
  const go = (href: string): void => {
    if (work.current) setLeaving(href);
    else goNow(href);
  };
  const answer = (leave: boolean): void => {
    const wanted = leaving;
    question.current?.close();
    setLeaving(null);
    if (leave && wanted !== null) goNow(wanted);
  };
  const fail = (e: unknown): void => setError(e === null ? null : messageOf(e));
  const holdsWork = (unsaved: boolean): void => {
    work.current = unsaved;
  };
  const route = routeOf(location.path);
  useEffect(() => {
    document.title = `${route.title} · crm-ferry workbench`;
  }, [route]);

  if (session === null) {
    return (
      <main>
        <h1>crm-ferry workbench</h1>
        {error ? (
          <p role="alert" class="error">
            {error}
          </p>
        ) : (
          <p>Loading…</p>
        )}
      </main>
    );
  }
  const props: ViewProps = { session, jobs, go, fail, query: new URLSearchParams(location.search), refresh, holdsWork };
  const running = jobs.current;
  const View = VIEWS[route.href];
  return (
    <>
      <header class="top">
        <p class="brand">crm-ferry workbench</p>
        <dl class="account" aria-label="Account">
          <div>
            <dt>Folder</dt>
            <dd>{session.dir}</dd>
          </div>
          <div>
            <dt>Account</dt>
            <dd data-account="address">{session.account.address}</dd>
          </div>
          <div>
            <dt>Signed in with</dt>
            <dd data-account="user">{session.account.user}</dd>
          </div>
        </dl>
        {session.account.problem ? <p class="error">The account did not answer: {session.account.problem}</p> : null}
      </header>
      <nav aria-label="Steps of the migration">
        <ol>
          {ROUTES.map((r) => (
            <li key={r.href}>
              <Link href={r.href} go={go} current={r.href === route.href}>
                {r.label}
              </Link>
            </li>
          ))}
        </ol>
        <p class="status" role="status" aria-live="polite">
          {running
            ? `${running.kind === 'run' ? (running.limit ? `Sample run (${running.limit} rows a step)` : 'Run') : running.kind === 'check' ? 'Check' : running.kind === 'verify' ? 'Verify' : 'Undo'} under way${running.state === 'stopping' ? ', stopping' : ''}`
            : live
              ? 'Nothing under way'
              : 'Connecting…'}
        </p>
      </nav>
      <main>
        {error ? (
          <div role="alert" class="error">
            <p>{error}</p>
            <button type="button" onClick={() => setError(null)}>
              Dismiss
            </button>
          </div>
        ) : null}
        <View {...props} />
      </main>
      <dialog
        ref={question}
        aria-labelledby="leave-title"
        aria-describedby="leave-text"
        onClose={() => setLeaving(null)}
      >
        <h2 id="leave-title">Leave without saving?</h2>
        <p id="leave-text">The mapping has changes that are not saved. Leaving this view loses them.</p>
        <div class="toolbar">
          <button type="button" class="primary" onClick={() => answer(false)}>
            Stay and keep the changes
          </button>
          <button type="button" class="danger" onClick={() => answer(true)}>
            Leave without saving
          </button>
        </div>
      </dialog>
    </>
  );
}

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(<App />, root);
}
