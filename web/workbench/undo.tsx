import { useRef, useState } from 'preact/hooks';
import type { JobView, UndoPreview } from '../../src/workbench/api.ts';
import { get, post } from './http.ts';
import { JobError, jobOf } from './job.tsx';
import type { ViewProps } from './router.tsx';

/** The Undo view: the last run rolled back, after a confirmation that says what goes. */
export function UndoView(props: ViewProps) {
  const job = jobOf(props.jobs, 'undo');
  const [preview, setPreview] = useState<UndoPreview | null>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  const busy = props.jobs.current !== null;
  const ask = (): void => {
    get<UndoPreview>('/api/undo/preview').then((answer) => {
      setPreview(answer);
      dialog.current?.showModal();
    }, props.fail);
  };
  const confirm = (): void => {
    dialog.current?.close();
    post<JobView>('/api/undo').then(() => props.fail(null), props.fail);
  };
  return (
    <section aria-labelledby="undo-title">
      <h1 id="undo-title">Undo</h1>
      <p>Deletes what the last run created and sets back what it updated. Undo again to go one run further back.</p>
      <button type="button" onClick={ask} disabled={busy || !props.session.planExists}>
        Undo the last run…
      </button>
      <dialog ref={dialog} aria-labelledby="undo-confirm-title">
        <h2 id="undo-confirm-title">Undo the last run?</h2>
        {preview ? (
          <ul>
            {preview.lines.map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
        ) : null}
        <div class="toolbar">
          <button type="button" class="danger" onClick={confirm} disabled={preview === null || preview.runs === 0}>
            Delete and set back
          </button>
          <button type="button" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
        </div>
      </dialog>
      {job?.state === 'running' ? <p role="status">Undoing…</p> : null}
      <JobError job={job} />
      {job?.undo ? (
        <pre role="status" data-undo="outcome">
          {job.undo.text}
        </pre>
      ) : null}
    </section>
  );
}
