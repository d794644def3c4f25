import { useEffect, useState } from 'preact/hooks';
import type { JobView, LatestRunView, ProgressPoint, RunProgress, StepProgress } from '../../src/workbench/api.ts';
import { duration, get, n, post } from './http.ts';
import { Head, JobError, jobOf, RejectsTable } from './job.tsx';
import { Link, type ViewProps } from './router.tsx';

/** The Run view: a sample first, then the whole run, its progress live; Stop and Resume. */
export function RunView(props: ViewProps) {
  const job = jobOf(props.jobs, 'run');
  const [sample, setSample] = useState('20');
  const busy = props.jobs.current !== null;
  const running = job !== null && (job.state === 'running' || job.state === 'stopping');
  const start = (limit: number | null): void => {
    post<JobView>('/api/run', { limit }).then(() => props.fail(null), props.fail);
  };
  const stop = (): void => {
    post('/api/stop').then(() => props.fail(null), props.fail);
  };
  const [latest, setLatest] = useState<LatestRunView | null>(null);
  // The state folder's latest run, read again whenever a job ends (a run, an undo) or another starts.
  const ended = `${props.jobs.current?.id ?? ''}/${props.jobs.last.run?.id ?? ''}/${props.jobs.last.undo?.id ?? ''}`;
  useEffect(() => {
    if (props.session.planExists) get<LatestRunView>('/api/latest-run').then(setLatest, props.fail);
  }, [ended, props.session.planExists]);
  const size = Number(sample);
  // The page's own last run is shown while it is the folder's latest and not undone: a run from the
  // command line since, or an undo, makes the latest run below the one to read.
  const superseded =
    !running && latest !== null && job?.run != null && (latest.id !== job.run.id || latest.state === 'undone');
  const cut =
    job?.run?.status === 'interrupted' ||
    job?.run?.status === 'stopped' ||
    job?.state === 'failed' ||
    (!running && (latest?.state === 'going' || latest?.state === 'interrupted'));
  return (
    <section aria-labelledby="run-title">
      <h1 id="run-title">Run</h1>
      <p>
        Writes the rows into the account, each exactly once. Closing this page does not stop a run; open it again to see
        it.
      </p>
      {!props.session.planExists ? (
        <p>
          Nothing to run yet: save a mapping in{' '}
          <Link href="/files" go={props.go}>
            Files → Map
          </Link>{' '}
          first.
        </p>
      ) : (
        <div class="toolbar">
          <label>
            Rows per step in a sample
            <input
              type="number"
              min={1}
              value={sample}
              onInput={(event) => setSample((event.target as HTMLInputElement).value)}
            />
          </label>
          <button type="button" onClick={() => start(size)} disabled={busy || !Number.isInteger(size) || size < 1}>
            Run a sample
          </button>
          <button type="button" class="primary" onClick={() => start(null)} disabled={busy}>
            {cut ? 'Resume' : 'Run everything'}
          </button>
          <button type="button" onClick={stop} disabled={!running || job?.state === 'stopping'}>
            Stop
          </button>
        </div>
      )}
      {job && !superseded ? (
        <section aria-labelledby="run-state">
          <h2 id="run-state">
            {job.limit === null ? 'The run' : `The sample of ${job.limit} rows a step`}
            {running ? (job.state === 'stopping' ? ': stopping' : ': under way') : ''}
          </h2>
          {job.progress && running ? <Progress progress={job.progress} /> : null}
          {job.run ? (
            <>
              <p role="status" data-run="outcome">
                {job.run.text}
              </p>
              <Counts steps={job.run.steps} caption="Rows by step" />
              <p>
                {n(job.run.requests)} requests in {duration(job.run.elapsedMs / 1000)}.
              </p>
            </>
          ) : null}
          <JobError job={job} />
        </section>
      ) : null}
      {latest && !running ? <LatestRun latest={latest} /> : null}
    </section>
  );
}

function when(at: string | null): string {
  return at === null ? '' : new Date(at).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short' });
}

/** What the latest run of the folder did, whoever started it; its rejected rows and what to do about them. */
function LatestRun({ latest }: { latest: LatestRunView }) {
  const rejected = latest.steps.reduce((sum, s) => sum + s.rejected, 0);
  const created = latest.steps.reduce((sum, s) => sum + s.created, 0);
  const updated = latest.steps.reduce((sum, s) => sum + s.updated, 0);
  const origin = latest.fromPage ? '' : ' (started outside this page: on the command line, or by an earlier workbench)';
  let said: string;
  if (latest.state === 'none') said = 'No run has written to the account from this folder yet.';
  else if (latest.state === 'undone')
    said = `Undone: what the run of ${when(latest.startedAt)}${origin} wrote was deleted and set back. Run everything writes the rows again.`;
  else if (latest.state === 'going')
    said = `Started ${when(latest.startedAt)}${origin} and not ended: it is under way, or it stopped before its end. Run everything goes on from where it stopped.`;
  else {
    const counts = `${n(created)} created, ${n(updated)} updated, ${n(rejected)} rejected`;
    said =
      latest.state === 'interrupted'
        ? `Stopped before its end, ${when(latest.endedAt)}${origin}: ${counts}. Run everything goes on from where it stopped.`
        : `Ended ${when(latest.endedAt)}${origin}: ${counts}.`;
  }
  return (
    <section aria-labelledby="latest-title">
      <h2 id="latest-title">The latest run</h2>
      <p data-latest="state">{said}</p>
      {rejected > 0 && latest.state !== 'undone' ? (
        <>
          <p data-latest="next">
            <strong>Next:</strong> fix the file or the mapping, then Run everything again: only the rejected rows are
            sent.
          </p>
          {latest.steps
            .filter((s) => s.rejects.length > 0)
            .map((s) => (
              <div key={s.step} class="scroll">
                <RejectsTable step={s.step} rejects={s.rejects} total={s.rejected} file={s.rejectsFile} />
              </div>
            ))}
        </>
      ) : null}
    </section>
  );
}

function Counts({ steps, caption }: { steps: StepProgress[]; caption: string }) {
  return (
    <table class="grid">
      <caption>{caption}</caption>
      <Head columns={['Step', 'Rows read', 'Created', 'Updated', 'Unchanged', 'Rejected', 'Skipped or repeated']} />
      <tbody>
        {steps.map((s) => (
          <tr key={s.step} data-step={s.step}>
            <th scope="row">{s.step}</th>
            <td data-count="rowsRead">
              {n(s.rowsRead)}
              {s.total !== null ? ` of ${n(s.total)}` : ''}
            </td>
            <td data-count="created">{n(s.created)}</td>
            <td data-count="updated">{n(s.updated)}</td>
            <td data-count="unchanged">{n(s.unchanged)}</td>
            <td data-count="rejected">{n(s.rejected)}</td>
            <td>{n(s.skipped + s.repeated)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Progress({ progress }: { progress: RunProgress }) {
  return (
    <>
      <Counts steps={progress.steps} caption="Rows so far" />
      <dl class="facts">
        <dt>Requests</dt>
        <dd>{n(progress.requests)}</dd>
        <dt>Quota left this hour</dt>
        <dd>
          {progress.quotaRemaining === null
            ? 'not said'
            : `${n(progress.quotaRemaining)}${progress.quotaLimit === null ? '' : ` of ${n(progress.quotaLimit)}`}`}
        </dd>
        <dt>Time</dt>
        <dd>
          {duration(progress.elapsedMs / 1000)} so far
          {progress.secondsLeft !== null ? `, about ${duration(progress.secondsLeft)} left` : ''}
        </dd>
      </dl>
      <Chart points={progress.points} />
    </>
  );
}

/** Rows and requests over time, as two lines. */
function Chart({ points }: { points: ProgressPoint[] }) {
  if (points.length < 2) return null;
  const width = 480;
  const height = 120;
  const last = points[points.length - 1] as ProgressPoint;
  const maxAt = Math.max(last.at, 1);
  const maxY = Math.max(1, ...points.map((p) => Math.max(p.rows, p.requests)));
  const line = (pick: (p: ProgressPoint) => number): string =>
    points
      .map((p) => `${((p.at / maxAt) * width).toFixed(1)},${(height - (pick(p) / maxY) * height).toFixed(1)}`)
      .join(' ');
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${width} ${height}`}
        width={width}
        height={height}
        role="img"
        aria-label={`${n(last.rows)} rows and ${n(last.requests)} requests after ${duration(last.at)}`}
      >
        <polyline class="rows" points={line((p) => p.rows)} />
        <polyline class="requests" points={line((p) => p.requests)} />
      </svg>
      <figcaption>
        <span class="key rows">rows</span> and <span class="key requests">requests</span> over time
      </figcaption>
    </figure>
  );
}
