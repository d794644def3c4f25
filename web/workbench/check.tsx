import type { CheckView as Check, JobView } from '../../src/workbench/api.ts';
import { duration, n, post } from './http.ts';
import { Head, JobError, jobOf, RejectsTable } from './job.tsx';
import { Link, type ViewProps } from './router.tsx';

/** The Check view: `validate --online` over every row and the dry run, before anything is written. */
export function CheckView(props: ViewProps) {
  const job = jobOf(props.jobs, 'check');
  const busy = props.jobs.current !== null;
  const start = (): void => {
    post<JobView>('/api/check').then(() => props.fail(null), props.fail);
  };
  return (
    <section aria-labelledby="check-title">
      <h1 id="check-title">Check</h1>
      <p>
        Maps every row of every step without writing, checks names against the account and counts the requests the run
        needs.
      </p>
      {!props.session.planExists ? (
        <p>
          Nothing to check yet: save a mapping in{' '}
          <Link href="/files" go={props.go}>
            Files → Map
          </Link>{' '}
          first.
        </p>
      ) : (
        <button type="button" class="primary" onClick={start} disabled={busy}>
          Check every row
        </button>
      )}
      {job?.state === 'running' || job?.state === 'stopping' ? <p role="status">Checking…</p> : null}
      <JobError job={job} />
      {job?.check ? <CheckResult check={job.check} done={job.state === 'finished'} /> : null}
    </section>
  );
}

function CheckResult({ check, done }: { check: Check; done: boolean }) {
  const rejected = check.steps.reduce((sum, s) => sum + s.rejected, 0);
  return (
    <>
      <h2>Rows</h2>
      <p role="status">
        {rejected === 0
          ? 'Every row is valid.'
          : `${n(rejected)} row${rejected === 1 ? ' is' : 's are'} rejected: fix the input or the mapping, then check again.`}
      </p>
      <table class="grid">
        <caption>Rows by step</caption>
        <Head columns={['Step', 'File', 'Rows read', 'Valid', 'Skipped', 'Rejected']} />
        <tbody>
          {check.steps.map((s) => (
            <tr key={s.step}>
              <th scope="row">{s.step}</th>
              <td>
                {s.input} with {s.mapping}
              </td>
              <td>{n(s.rowsRead)}</td>
              <td>{n(s.ok)}</td>
              <td>{n(s.skipped)}</td>
              <td data-count="rejected">{n(s.rejected)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {check.steps.map((s) =>
        s.rejects.length === 0 && s.warnings.length === 0 && s.notCarried.length === 0 ? null : (
          <section key={s.step} aria-labelledby={`step-${s.step}`}>
            <h3 id={`step-${s.step}`}>Step {s.step}</h3>
            {s.rejects.length > 0 ? (
              <RejectsTable step={s.step} rejects={s.rejects} total={s.rejected} file={s.rejectsFile} />
            ) : null}
            {s.warnings.length > 0 ? (
              <>
                <h4>Warnings by kind</h4>
                <ul>
                  {s.warnings.map((w) => (
                    <li key={w.kind}>
                      {w.kind}: {n(w.count)}
                    </li>
                  ))}
                </ul>
              </>
            ) : null}
            {s.notCarried.length > 0 ? (
              <>
                <h4>Columns no field reads</h4>
                <ul>
                  {s.notCarried.map((c) => (
                    <li key={c.column}>
                      {c.column}: {n(c.rows)} rows with a value
                    </li>
                  ))}
                </ul>
              </>
            ) : null}
          </section>
        ),
      )}
      <h2>Set-up of the account</h2>
      {check.create.length === 0 ? (
        <p>The run creates nothing in the account's set-up.</p>
      ) : (
        <>
          <p>The run creates first:</p>
          <ul>
            {check.create.map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
        </>
      )}
      {check.personMust.length === 0 ? (
        <p>Nothing is missing that only a person can create.</p>
      ) : (
        <>
          <p>Only a person can create these, in the account, before the run:</p>
          <ul>
            {check.personMust.map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
        </>
      )}
      <h2>Requests</h2>
      {done ? (
        <p data-check="requests">
          The run needs {n(check.requests)} requests
          {check.estimatedSeconds !== null && check.limitPerHour !== null
            ? `: about ${duration(check.estimatedSeconds)} at the account's ${n(check.limitPerHour)} an hour.`
            : ' (the account has not said its rate).'}
        </p>
      ) : (
        <p>Counting the requests (a dry run)…</p>
      )}
    </>
  );
}
