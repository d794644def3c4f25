import { Head } from './job.tsx';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { MapColumnView, MapEdit, MapEntryView, MapView as Mapping, OnInvalidChoice, PreviewRow, SaveResult } from '../../src/workbench/api.ts';
import { ON_INVALID_CHOICES } from '../../src/workbench/api.ts';
import { post } from './http.ts';
import { Link, type ViewProps } from './main.tsx';

/** How long the YAML rests before the table follows it. */
const YAML_PAUSE_MS = 400;

const ON_INVALID_WORDS: Record<OnInvalidChoice, string> = { default: "the mapping's default", reject: 'reject the row', drop: 'leave the value out', keep: 'keep it as typed' };
const DUPLICATE_WORDS: Record<string, string> = { reject: 'reject the later rows', first: 'keep the first row', merge: 'merge them into the first', separate: 'each its own record' };

/** The value of the target list for an entry: the target, or `custom:NAME` for a custom field. */
function targetValue(entry: MapEntryView | undefined): string {
  if (!entry) return '';
  return entry.to === 'custom' && entry.definition !== null ? `custom:${entry.definition}` : entry.to;
}

/**
 * The Map view: the input's columns as a table (target, transform, required, what a bad value
 * does), the first rows mapped with each rejected or warned cell marked, and the YAML beside it.
 * Every change goes to the server, which edits the YAML and maps the rows again.
 */
export function MapView(props: ViewProps) {
  const input = props.query.get('input');
  const [view, setView] = useState<Mapping | null>(null);
  const [yaml, setYaml] = useState('');
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState<string | null>(null);
  const pause = useRef<number | null>(null);
  const asked = useRef(0);

  /** Sends the YAML (and an edit of the table); the newest answer wins. */
  const ask = (text: string | undefined, edit?: MapEdit, fromYaml = false): void => {
    if (input === null) return;
    const ticket = ++asked.current;
    setBusy(true);
    post<Mapping>('/api/map', { input, ...(text === undefined ? {} : { yaml: text }), ...(edit ? { edit } : {}) })
      .then((answer) => {
        if (ticket !== asked.current) return;
        setView(answer);
        // The text being typed is left alone; an edit of the table shows its new YAML.
        if (!fromYaml) setYaml(answer.yaml);
        props.fail(null);
      }, props.fail)
      .finally(() => {
        if (ticket === asked.current) setBusy(false);
      });
  };
  useEffect(() => ask(undefined), [input]);

  if (input === null) {
    return (
      <section aria-labelledby="map-title">
        <h1 id="map-title">Map</h1>
        <p>
          Choose a file to map in <Link href="/files" go={props.go}>Files</Link>.
        </p>
      </section>
    );
  }
  const edit = (change: MapEdit): void => {
    setSaved(null);
    ask(yaml, change);
  };
  const typed = (text: string): void => {
    setYaml(text);
    setSaved(null);
    if (pause.current !== null) window.clearTimeout(pause.current);
    pause.current = window.setTimeout(() => ask(text, undefined, true), YAML_PAUSE_MS);
  };
  const save = (): void => {
    setBusy(true);
    post<SaveResult>('/api/save', { input, yaml })
      .then((result) => {
        setSaved(`Saved ${result.mappingFile}; ${result.plan} reads ${input} in step ${result.step}.`);
        props.refresh();
        ask(yaml);
      }, props.fail)
      .finally(() => setBusy(false));
  };

  return (
    <section aria-labelledby="map-title" aria-busy={busy}>
      <h1 id="map-title">Map {input}</h1>
      {view === null ? (
        <p>Reading the file and drafting a mapping…</p>
      ) : (
        <>
          <p class="note">
            {view.entity === 'party' ? 'Each row becomes a person or an organisation' : `Each row becomes a ${view.entity}`}; the key is {view.key || '(none)'}. Mapping: {view.originNote}.
          </p>
          <div class="toolbar">
            <button type="button" class="primary" onClick={save} disabled={busy || view.problems.length > 0}>
              Save mapping
            </button>
            <span role="status" aria-live="polite">
              {saved ?? (view.unsaved ? 'Not saved yet.' : 'Saved.')}
            </span>
          </div>
          <MappingSettings view={view} edit={edit} />
          <ColumnTable view={view} edit={edit} />
          {view.otherEntries.length > 0 ? (
            <>
              <h2>Fields that read no single column</h2>
              <ul>
                {view.otherEntries.map((entry) => (
                  <li key={entry.index}>{entry.summary}</li>
                ))}
              </ul>
            </>
          ) : null}
          <Preview view={view} />
          <h2 id="yaml-title">Mapping file</h2>
          <p class="note">The table and this YAML are one mapping: change either, the other follows.</p>
          <div class="yaml">
            <label for="yaml-text">Mapping YAML</label>
            <textarea id="yaml-text" spellcheck={false} rows={Math.min(40, yaml.split('\n').length + 2)} value={yaml} onInput={(event) => typed((event.target as HTMLTextAreaElement).value)} aria-describedby="yaml-problems" aria-invalid={view.problems.length > 0} />
            <div id="yaml-problems" role="status" aria-live="polite">
              {view.problems.length > 0 ? (
                <ul class="problems">
                  {view.problems.map((p) => (
                    <li key={`${p.line}-${p.message}`}>{p.line === null ? p.message : `Line ${p.line}: ${p.message}`}</li>
                  ))}
                </ul>
              ) : (
                <p>The mapping loads.</p>
              )}
            </div>
          </div>
        </>
      )}
    </section>
  );
}

function MappingSettings({ view, edit }: { view: Mapping; edit: (e: MapEdit) => void }) {
  const [match, setMatch] = useChoice(view.matchBy);
  const [duplicates, setDuplicates] = useChoice(view.onDuplicate);
  return (
    <fieldset class="settings">
      <legend>The whole mapping</legend>
      <label>
        Rows with the same key
        <select
          value={duplicates}
          onChange={(event) => {
            const chosen = (event.target as HTMLSelectElement).value;
            setDuplicates(chosen);
            edit({ kind: 'onDuplicate', onDuplicate: chosen });
          }}
        >
          {Object.entries(DUPLICATE_WORDS).map(([value, words]) => (
            <option key={value} value={value}>
              {words}
            </option>
          ))}
        </select>
      </label>
      <label>
        Find records the account has by
        <input type="text" value={match} placeholder="email, name or custom" onInput={(event) => setMatch((event.target as HTMLInputElement).value)} onChange={() => edit({ kind: 'matchBy', matchBy: match })} />
      </label>
    </fieldset>
  );
}

function ColumnTable({ view, edit }: { view: Mapping; edit: (e: MapEdit) => void }) {
  return (
    <table class="grid columns">
      <caption>Columns of {view.input}: what each becomes</caption>
      <Head columns={['Column', 'Samples', 'Target', 'Transform', 'Options', 'Required', 'A bad value']} />
      <tbody>
        {view.columns.map((column) => (
          <ColumnRow key={column.name} view={view} column={column} edit={edit} />
        ))}
      </tbody>
    </table>
  );
}

/**
 * A control's value as the person set it, until the server's answer says otherwise: a list moved
 * with the arrow keys keeps the choice made while the answer to the first key is on its way.
 */
function useChoice<T>(server: T): [T, (value: T) => void] {
  const [value, setValue] = useState(server);
  useEffect(() => setValue(server), [server]);
  return [value, setValue];
}

function ColumnRow({ view, column, edit }: { view: Mapping; column: MapColumnView; edit: (e: MapEdit) => void }) {
  const entry = column.entries.find((e) => e.editable);
  const others = column.entries.filter((e) => e !== entry);
  const [param, setParam] = useChoice(entry?.param ?? '');
  const [target, setTarget] = useChoice(targetValue(entry));
  const [transform, setTransform] = useChoice(entry?.transform ?? '');
  const [onInvalid, setOnInvalid] = useChoice<OnInvalidChoice>(entry?.onInvalid ?? 'default');
  const name = column.name;
  const custom = new Set(view.customFields);
  if (entry?.to === 'custom' && entry.definition) custom.add(entry.definition);
  return (
    <tr>
      <th scope="row">{name}</th>
      <td class="samples">{column.samples.join(' · ')}</td>
      <td>
        {entry || others.length === 0 ? (
          <select
            aria-label={`Target of ${name}`}
            value={target}
            onChange={(event) => {
              const to = (event.target as HTMLSelectElement).value;
              setTarget(to);
              edit({ kind: 'target', column: name, to });
            }}
          >
            <option value="">(not imported)</option>
            {view.targets
              .filter((t) => t !== 'custom')
              .map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            {[...custom].map((definition) => (
              <option key={definition} value={`custom:${definition}`}>
                custom field: {definition}
              </option>
            ))}
          </select>
        ) : null}
        {others.map((e) => (
          <p key={e.index} class="also">
            {e.summary} <span class="note">(edit in the YAML)</span>
          </p>
        ))}
      </td>
      <td>
        {entry ? (
          <select
            aria-label={`Transform of ${name}`}
            value={transform}
            onChange={(event) => {
              const chosen = (event.target as HTMLSelectElement).value;
              setTransform(chosen);
              edit({ kind: 'transform', column: name, transform: chosen, param: '' });
            }}
          >
            <option value="">{entry.before.length > 0 ? `only ${entry.before.join(', ')}` : '(none)'}</option>
            {view.transforms.map((t) => (
              <option key={t} value={t}>
                {entry.before.length > 0 ? `${entry.before.join(', ')}, ${t}` : t}
              </option>
            ))}
          </select>
        ) : null}
      </td>
      <td>
        {entry && entry.transform !== '' ? (
          <input type="text" aria-label={`Options of ${name}`} value={param} size={12} onInput={(event) => setParam((event.target as HTMLInputElement).value)} onChange={() => edit({ kind: 'transform', column: name, transform: entry.transform, param })} />
        ) : null}
      </td>
      <td>{entry ? <input type="checkbox" aria-label={`${name} required`} checked={entry.required} onChange={(event) => edit({ kind: 'required', column: name, required: (event.target as HTMLInputElement).checked })} /> : null}</td>
      <td>
        {entry ? (
          <select
            aria-label={`A bad value in ${name}`}
            value={onInvalid}
            onChange={(event) => {
              const chosen = (event.target as HTMLSelectElement).value as OnInvalidChoice;
              setOnInvalid(chosen);
              edit({ kind: 'onInvalid', column: name, onInvalid: chosen });
            }}
          >
            {ON_INVALID_CHOICES.map((choice) => (
              <option key={choice} value={choice}>
                {ON_INVALID_WORDS[choice]}
              </option>
            ))}
          </select>
        ) : null}
      </td>
    </tr>
  );
}

function statusWords(row: PreviewRow): string {
  return row.status === 'ok' ? 'ok' : row.status === 'rejected' ? 'rejected' : 'skipped';
}

function Preview({ view }: { view: Mapping }) {
  const rejected = view.preview.filter((r) => r.status === 'rejected').length;
  const warned = view.preview.filter((r) => Object.values(r.marks).some((marks) => marks.some((m) => m.kind === 'warning'))).length;
  return (
    <>
      <h2>The first rows, mapped</h2>
      <p class="note" role="status">
        {view.preview.length === 0 ? 'No row mapped: fix the mapping first.' : `${view.preview.length} rows: ${rejected} rejected, ${warned} with a warning.`}
      </p>
      {view.preview.length > 0 ? (
        <div class="scroll" tabIndex={0} role="region" aria-label="The first rows, mapped">
          <table class="grid preview">
            <caption>First {view.preview.length} rows of {view.input}</caption>
            <thead>
              <tr>
                <th scope="col">Row</th>
                <th scope="col">Outcome</th>
                {view.columns.map((c) => (
                  <th scope="col" key={c.name}>
                    {c.name}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {view.preview.map((row) => (
                <tr key={row.row} class={row.status} data-row={row.row}>
                  <th scope="row">{row.row}</th>
                  <td>
                    {statusWords(row)}
                    {(row.marks[''] ?? []).map((m) => (
                      <span key={m.text} class={`mark ${m.kind}`}>
                        {m.text}
                      </span>
                    ))}
                  </td>
                  {view.columns.map((c) => {
                    const marks = row.marks[c.name] ?? [];
                    return (
                      <td key={c.name} class={marks.some((m) => m.kind === 'rejected') ? 'cell-rejected' : marks.length > 0 ? 'cell-warning' : undefined} data-column={c.name}>
                        {row.cells[c.name]}
                        {marks.map((m) => (
                          <span key={m.text} class={`mark ${m.kind}`}>
                            {m.kind === 'rejected' ? 'Rejected: ' : 'Warning: '}
                            {m.text}
                          </span>
                        ))}
                      </td>
                    );
                  })}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}
