import { Head } from './job.tsx';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { FilesView as Files, InspectView } from '../../src/workbench/api.ts';
import { get, n, q, upload } from './http.ts';
import { Link, type ViewProps } from './router.tsx';

function size(bytes: number): string {
  return bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 * 1024
      ? `${(bytes / 1024).toFixed(1)} KiB`
      : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** The input files of the folder, each with `inspect`'s facts on demand, and a file added by upload. */
export function FilesView(props: ViewProps) {
  const [files, setFiles] = useState<Files | null>(null);
  const [inspected, setInspected] = useState<InspectView | null>(null);
  const [busy, setBusy] = useState(false);
  const chooser = useRef<HTMLInputElement>(null);
  const load = (): void => {
    get<Files>('/api/files').then(setFiles, props.fail);
  };
  useEffect(load, []);

  const inspect = (name: string): void => {
    setBusy(true);
    get<InspectView>(`/api/inspect?${q('file', name)}`)
      .then(setInspected, props.fail)
      .finally(() => setBusy(false));
  };
  const add = (event: Event): void => {
    event.preventDefault();
    const file = chooser.current?.files?.[0];
    if (!file) return;
    setBusy(true);
    upload<{ name: string }>(`/api/upload?${q('name', file.name)}`, file)
      .then(() => {
        if (chooser.current) chooser.current.value = '';
        load();
      }, props.fail)
      .finally(() => setBusy(false));
  };

  return (
    <section aria-labelledby="files-title">
      <h1 id="files-title">Files</h1>
      <p>
        The customer's files in this folder. Inspect one to see how it reads; map it to say what each column becomes.
      </p>
      {files === null ? (
        <p>Reading the folder…</p>
      ) : files.inputs.length === 0 ? (
        <p>No CSV, XLSX or legacy export file in this folder yet: add one below.</p>
      ) : (
        <table class="grid">
          <caption>Input files</caption>
          <Head columns={['File', 'Kind', 'Size', 'Mapping', 'Actions']} />
          <tbody>
            {files.inputs.map((file) => (
              <tr key={file.name}>
                <th scope="row">{file.name}</th>
                <td>{file.kind}</td>
                <td>{size(file.bytes)}</td>
                <td>{file.mapping ? `${file.mapping} (step ${file.step})` : 'none yet'}</td>
                <td class="actions">
                  <button
                    type="button"
                    disabled={busy}
                    onClick={() => inspect(file.name)}
                    aria-label={`Inspect ${file.name}`}
                  >
                    Inspect
                  </button>
                  <Link href={`/map?${q('input', file.name)}`} go={props.go}>
                    Map<span class="visually-hidden"> {file.name}</span>
                  </Link>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form class="upload" onSubmit={add}>
        <label for="upload-file">Add a file to the folder</label>
        <input id="upload-file" type="file" ref={chooser} accept=".csv,.tsv,.txt,.xlsx,.xml,.json" />
        <button type="submit" disabled={busy}>
          Upload
        </button>
      </form>
      {inspected ? <Inspected view={inspected} /> : null}
    </section>
  );
}

function Inspected({ view }: { view: InspectView }) {
  return (
    <section aria-labelledby="inspect-title" class="card">
      <h2 id="inspect-title">{view.name}</h2>
      <dl class="facts">
        <dt>Format</dt>
        <dd>{view.format}</dd>
        {view.encoding ? (
          <>
            <dt>Encoding</dt>
            <dd>{view.encoding}</dd>
          </>
        ) : null}
        {view.delimiter ? (
          <>
            <dt>Delimiter</dt>
            <dd>{view.delimiter}</dd>
          </>
        ) : null}
        {view.sheets ? (
          <>
            <dt>Sheets</dt>
            <dd>{view.sheets.join(', ')}</dd>
          </>
        ) : null}
        <dt>Rows</dt>
        <dd>{n(view.rows)}</dd>
        <dt>Rows that cannot be read</dt>
        <dd>{n(view.rowErrors)}</dd>
      </dl>
      {view.findings.length > 0 ? (
        <>
          <h3>Check before importing</h3>
          <ul>
            {view.findings.map((f) => (
              <li key={f.message}>{f.message}</li>
            ))}
          </ul>
        </>
      ) : (
        <p>No repeated keys or e-mail addresses, and no dates that read two ways.</p>
      )}
      {view.notes.length > 0 ? (
        <>
          <h3>Warnings and row errors</h3>
          <ul>
            {view.notes.map((note) => (
              <li key={note}>{note}</li>
            ))}
          </ul>
        </>
      ) : null}
      <table class="grid">
        <caption>Columns of {view.name}</caption>
        <Head columns={['Column', 'Filled', 'Samples']} />
        <tbody>
          {view.columns.map((c) => (
            <tr key={c.name}>
              <th scope="row">{c.name}</th>
              <td>{c.fillRate.toFixed(1)}%</td>
              <td>{c.samples.join(' · ')}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
