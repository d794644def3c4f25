import type { JobKind, JobsView, JobView, RejectView } from '../../src/workbench/api.ts';
import { n, q } from './http.ts';

/** The job of a kind the view shows: the one under way, else the last that ended. */
export function jobOf(jobs: JobsView, kind: JobKind): JobView | null {
  if (jobs.current?.kind === kind) return jobs.current;
  return jobs.last[kind] ?? null;
}

/** A job's error, said where the view's results would be. */
export function JobError({ job }: { job: JobView | null }) {
  if (!job?.error) return null;
  return (
    <div class="error" role="alert">
      <p>
        <strong>It stopped:</strong> {job.error.message}
      </p>
    </div>
  );
}

/** A table's header row of plain column names. */
export function Head({ columns }: { columns: string[] }) {
  return (
    <thead>
      <tr>
        {columns.map((column) => (
          <th scope="col" key={column}>
            {column}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/**
 * A step's rejected rows with their reasons, and a link to the file that holds them all (served by
 * the workbench from inside the folder, as a download).
 */
export function RejectsTable({
  step,
  rejects,
  total,
  file,
}: {
  step: string;
  rejects: RejectView[];
  total: number;
  file: string | null;
}) {
  return (
    <table class="grid">
      <caption>
        Rejected rows of {step}
        {file ? (
          <>
            {' '}
            (all {n(total)} in <a href={`/api/download?${q('file', file)}`}>{file}</a>)
          </>
        ) : null}
      </caption>
      <Head columns={['Row', 'Field', 'Why']} />
      <tbody>
        {rejects.map((r) => (
          <tr key={r.row}>
            <th scope="row">{r.row}</th>
            <td>{r.field}</td>
            <td class="reason">{r.reason}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
