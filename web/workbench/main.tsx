/**
 * The workbench's page: one view per step of a migration, each at its own address (Files, Map,
 * Check, Run, Verify, Undo). Written with preact (about 10 KiB): the views re-render from the
 * server's answers and the job's events, which plain DOM code would redo by hand in every view,
 * and nothing heavier is needed. Everything it loads comes from the workbench itself.
 */
import { render, type ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { JobsView, SessionView } from '../../src/workbench/api.ts';
import { CheckView } from './check.tsx';
import { FilesView } from './files.tsx';
import { get } from './http.ts';
import { MapView } from './map.tsx';
import { RunView } from './run.tsx';
import { UndoView } from './undo.tsx';
import { VerifyView } from './verify.tsx';

export interface ViewProps {
  session: SessionView;
  jobs: JobsView;
  /** Goes to another view (its address). */
  go: (href: string) => void;
  /** Shows an error above the view; null clears it. */
  fail: (error: unknown) => void;
  /** The query of the address (`input` for the Map view). */
  query: URLSearchParams;
  /** Reloads the session (the plan exists once a mapping is saved). */
  refresh: () => void;
}

const VIEWS: Array<{ href: string; label: string; title: string }> = [
  { href: '/files', label: 'Files', title: 'Files' },
  { href: '/map', label: 'Map', title: 'Map' },
  { href: '/check', label: 'Check', title: 'Check' },
  { href: '/run', label: 'Run', title: 'Run' },
  { href: '/verify', label: 'Verify', title: 'Verify' },
  { href: '/undo', label: 'Undo', title: 'Undo' },
];

/** A link to a view, followed without reloading the page. */
export function Link(props: { href: string; go: (href: string) => void; children: ComponentChildren; current?: boolean }) {
  return (
    <a
      href={props.href}
      aria-current={props.current ? 'page' : undefined}
      onClick={(event) => {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        props.go(props.href);
      }}
    >
      {props.children}
    </a>
  );
}

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

  const refresh = (): void => {
    get<SessionView>('/api/session').then(setSession, (e: unknown) => setError(messageOf(e)));
  };
  useEffect(refresh, []);
  useEffect(() => {
    const onPop = (): void => setLocation({ path: window.location.pathname, search: window.location.search });
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
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

  const go = (href: string): void => {
    window.history.pushState(null, '', href);
    const url = new URL(href, window.location.origin);
    setLocation({ path: url.pathname, search: url.search });
    setError(null);
    window.scrollTo(0, 0);
  };
  const fail = (e: unknown): void => setError(e === null ? null : messageOf(e));
  const path = location.path === '/' ? '/files' : location.path;
  const view = VIEWS.find((v) => v.href === path) ?? VIEWS[0];
  useEffect(() => {
    document.title = `${view?.title ?? 'Files'} · crm-ferry workbench`;
  }, [view]);

  if (session === null) {
    return (
      <main>
        <h1>crm-ferry workbench</h1>
        {error ? <p role="alert" class="error">{error}</p> : <p>Loading…</p>}
      </main>
    );
  }
  const props: ViewProps = { session, jobs, go, fail, query: new URLSearchParams(location.search), refresh };
  const running = jobs.current;
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
          {VIEWS.map((v) => (
            <li key={v.href}>
              <Link href={v.href} go={go} current={v.href === view?.href}>
                {v.label}
              </Link>
            </li>
          ))}
        </ol>
        <p class="status" role="status" aria-live="polite">
          {running ? `${running.kind === 'run' ? (running.limit ? `Sample run (${running.limit} rows a step)` : 'Run') : running.kind === 'check' ? 'Check' : running.kind === 'verify' ? 'Verify' : 'Undo'} under way${running.state === 'stopping' ? ', stopping' : ''}` : live ? 'Nothing under way' : 'Connecting…'}
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
        {view?.href === '/files' ? <FilesView {...props} /> : null}
        {view?.href === '/map' ? <MapView key={props.query.get('input') ?? ''} {...props} /> : null}
        {view?.href === '/check' ? <CheckView {...props} /> : null}
        {view?.href === '/run' ? <RunView {...props} /> : null}
        {view?.href === '/verify' ? <VerifyView {...props} /> : null}
        {view?.href === '/undo' ? <UndoView {...props} /> : null}
      </main>
    </>
  );
}

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(<App />, root);
}
