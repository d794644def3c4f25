import { useEffect, useState } from 'preact/hooks';
import type { JobView, ResultFile } from '../../src/workbench/api.ts';
import { get, n, post, q } from './http.ts';
import { Head, JobError, jobOf } from './job.tsx';
import type { ViewProps } from './router.tsx';

/** The Verify view: the account compared with the source, the same page as `verify --report`, and the result files. */
export function VerifyView(props: ViewProps) {
  const job = jobOf(props.jobs, 'verify');
  const [files, setFiles] = useState<ResultFile[]>([]);
  const busy = props.jobs.current !== null;
  useEffect(() => {
    get<ResultFile[]>('/api/results').then(setFiles, props.fail);
  }, [job?.state, props.jobs.last.run?.id]);
  const start = (): void => {
    post<JobView>('/api/verify').then(() => props.fail(null), props.fail);
  };
  return (
    <section aria-labelledby="verify-title">
      <h1 id="verify-title">Verify</h1>
      <p>
        Reads the source again and the account's records, and says what is missing, extra, differs or links nowhere.
        Writes nothing.
      </p>
      <button type="button" class="primary" onClick={start} disabled={busy || !props.session.planExists}>
        Verify the account
      </button>
      {job?.state === 'running' ? <p role="status">Verifying…</p> : null}
      <JobError job={job} />
      {job?.verify ? (
        <>
          <p role="status" data-verify="outcome" class={job.verify.matches ? 'ok' : 'attention'}>
            {job.verify.text}
          </p>
          <table class="grid">
            <caption>The account against the source</caption>
            <Head columns={['Step', 'Found', 'Missing', 'Extra', 'Differing', 'Links unresolved']} />
            <tbody>
              {job.verify.steps.map((s) => (
                <tr key={s.step}>
                  <th scope="row">{s.step}</th>
                  <td>{n(s.found)}</td>
                  <td>{n(s.missing)}</td>
                  <td>{n(s.extra)}</td>
                  <td>{n(s.differing)}</td>
                  <td>{n(s.unresolved)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <p>
            <a href={job.verify.reportUrl} target="_blank" rel="noopener">
              Open the report for the customer
            </a>{' '}
            (the page <code>verify --report</code> writes)
          </p>
          <iframe class="report" src={job.verify.reportUrl} title="Verify report" sandbox="" />
        </>
      ) : null}
      <h2>Result files</h2>
      {files.length === 0 ? (
        <p>No result file yet: a run writes them.</p>
      ) : (
        <ul>
          {files.map((f) => (
            <li key={f.name}>
              <a href={`/api/download?${q('file', f.name)}`} download>
                {f.name}
              </a>{' '}
              ({n(f.bytes)} bytes)
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
