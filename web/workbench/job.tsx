import type { JobKind, JobsView, JobView } from '../../src/workbench/api.ts';

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
