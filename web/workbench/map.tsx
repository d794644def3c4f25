import { Head } from './job.tsx';
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type {
  ChainLink,
  Choice,
  MapColumnView,
  MapEdit,
  MapView as Mapping,
  OnInvalidChoice,
  PreviewRow,
  SaveResult,
  TargetChoice,
} from '../../src/workbench/api.ts';
import { ON_INVALID_CHOICES } from '../../src/workbench/api.ts';
import { post } from './http.ts';
import { Link, type ViewProps } from './router.tsx';

/** How long the YAML rests before the table follows it. */
const YAML_PAUSE_MS = 400;

const ON_INVALID_WORDS: Record<OnInvalidChoice, string> = {
  default: "the mapping's default",
  reject: 'reject the row',
  drop: 'leave the value out',
  keep: 'keep it as typed',
};
const DUPLICATE_WORDS: Record<string, string> = {
  reject: 'reject the later rows',
  first: 'keep the first row',
  merge: 'merge them into the first',
  separate: 'each its own record',
};

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
  // Changes made here since the mapping was opened or saved: leaving the view would lose them. The
  // page is told at once (not in an effect, which runs after the next paint): a click on another
  // view right after Save must not be asked about.
  useEffect(() => () => props.holdsWork(false), []);

  // The YAML as the last answer or keystroke left it, and the requests in turn: an edit is made to
  // the YAML the edit before it gave, and Save saves what every edit before it made. Two quick
  // changes to the table (or a change and Save) never race, and none is lost.
  const yamlNow = useRef('');
  const keystrokes = useRef(0);
  const turns = useRef<Promise<unknown>>(Promise.resolve());
  const showYaml = (text: string): void => {
    yamlNow.current = text;
    setYaml(text);
  };
  const inTurn = <T,>(request: () => Promise<T>): Promise<T> => {
    const next = turns.current.then(request, request);
    turns.current = next.catch(() => undefined);
    return next;
  };

  /** Sends the YAML (`text` says which, when its turn comes) and an edit of the table; the newest answer wins. */
  const ask = (text: () => string | undefined, edit?: MapEdit, fromYaml = false): void => {
    if (input === null) return;
    const ticket = ++asked.current;
    const typedBefore = keystrokes.current;
    setBusy(true);
    inTurn(() => {
      const sent = text();
      return post<Mapping>('/api/map', {
        input,
        ...(sent === undefined ? {} : { yaml: sent }),
        ...(edit ? { edit } : {}),
      });
    })
      .then((answer) => {
        // A table edit's answer is the YAML the next edit starts from, even when a newer one is
        // coming; text typed since it was asked for wins over it.
        if (!fromYaml && keystrokes.current === typedBefore) yamlNow.current = answer.yaml;
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
  useEffect(() => ask(() => undefined), [input]);

  if (input === null) {
    return (
      <section aria-labelledby="map-title">
        <h1 id="map-title">Map</h1>
        <p>
          Choose a file to map in{' '}
          <Link href="/files" go={props.go}>
            Files
          </Link>
          .
        </p>
      </section>
    );
  }
  const edit = (change: MapEdit): void => {
    setSaved(null);
    props.holdsWork(true);
    ask(() => yamlNow.current, change);
  };
  const typed = (text: string): void => {
    keystrokes.current += 1;
    showYaml(text);
    setSaved(null);
    props.holdsWork(true);
    if (pause.current !== null) window.clearTimeout(pause.current);
    pause.current = window.setTimeout(() => ask(() => text, undefined, true), YAML_PAUSE_MS);
  };
  const save = (): void => {
    setBusy(true);
    let saving = '';
    inTurn(() => {
      saving = yamlNow.current;
      return post<SaveResult>('/api/save', { input, yaml: saving });
    })
      .then((result) => {
        setSaved(`Saved ${result.mappingFile}; ${result.plan} reads ${input} in step ${result.step}.`);
        // Typed while it was saved: still to save.
        if (yamlNow.current === saving) props.holdsWork(false);
        props.refresh();
        ask(() => yamlNow.current);
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
            {view.entity === 'party'
              ? 'Each row becomes a person or an organisation'
              : `Each row becomes a ${view.entity}`}
            ; the key is {view.key || '(none)'}. Mapping: {view.originNote}.
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
            <textarea
              id="yaml-text"
              spellcheck={false}
              rows={Math.min(40, yaml.split('\n').length + 2)}
              value={yaml}
              onInput={(event) => typed((event.target as HTMLTextAreaElement).value)}
              aria-describedby="yaml-problems"
              aria-invalid={view.problems.length > 0}
            />
            <div id="yaml-problems" role="status" aria-live="polite">
              {view.problems.length > 0 ? (
                <ul class="problems">
                  {view.problems.map((p) => (
                    <li key={`${p.line}-${p.message}`}>
                      {p.line === null ? p.message : `Line ${p.line}: ${p.message}`}
                    </li>
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
  const duplicates = 'Rows with the same key';
  const match = 'Find records the account has by';
  return (
    <fieldset class="settings">
      <legend>The whole mapping</legend>
      <label>
        {duplicates}
        <EditSelect
          label={duplicates}
          value={view.onDuplicate}
          onChoose={(chosen) => edit({ kind: 'onDuplicate', onDuplicate: chosen })}
        >
          {Object.entries(DUPLICATE_WORDS).map(([value, words]) => (
            <option key={value} value={value}>
              {words}
            </option>
          ))}
        </EditSelect>
      </label>
      {view.matches.length > 0 ? (
        <label>
          {match}
          <EditSelect label={match} value={view.match} onChoose={(chosen) => edit({ kind: 'match', match: chosen })}>
            <Options choices={view.matches} />
          </EditSelect>
        </label>
      ) : null}
    </fieldset>
  );
}

function ColumnTable({ view, edit }: { view: Mapping; edit: (e: MapEdit) => void }) {
  const groups = groupsOf(view.targets);
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scroll area is reached by keyboard to scroll it (axe: scrollable-region-focusable)
    <section class="scroll" tabIndex={0} aria-label="What each column becomes">
      <table class="grid columns">
        <caption>Columns of {view.input}: what each becomes</caption>
        <Head columns={['Column', 'Samples', 'Target', 'Type', 'Transforms, in order', 'Required', 'A bad value']} />
        <tbody>
          {view.columns.map((column, place) => (
            <ColumnRow key={column.name} view={view} groups={groups} column={column} place={place} edit={edit} />
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** The target list's groups, in the order the server gives them. */
function groupsOf(targets: TargetChoice[]): Array<[string, TargetChoice[]]> {
  const groups = new Map<string, TargetChoice[]>();
  for (const target of targets) groups.set(target.group, [...(groups.get(target.group) ?? []), target]);
  return [...groups];
}

function Options({ choices }: { choices: Choice[] }) {
  return (
    <>
      {choices.map((c) => (
        <option key={c.value} value={c.value}>
          {c.label}
        </option>
      ))}
    </>
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

/** A list whose choice is sent as an edit at once. */
function EditSelect(props: {
  label: string;
  value: string;
  describedBy?: string | undefined;
  onChoose: (value: string) => void;
  children: ComponentChildren;
}) {
  const [value, setValue] = useChoice(props.value);
  return (
    <select
      aria-label={props.label}
      aria-describedby={props.describedBy}
      value={value}
      onChange={(event) => {
        const chosen = (event.target as HTMLSelectElement).value;
        setValue(chosen);
        props.onChoose(chosen);
      }}
    >
      {props.children}
    </select>
  );
}

function ColumnRow({
  view,
  groups,
  column,
  place,
  edit,
}: {
  view: Mapping;
  groups: Array<[string, TargetChoice[]]>;
  column: MapColumnView;
  place: number;
  edit: (e: MapEdit) => void;
}) {
  const entry = column.entries.find((e) => e.editable);
  const others = column.entries.filter((e) => e !== entry);
  const name = column.name;
  // An id holds no space, whatever the column's name.
  const shared = entry?.shared ? `shared-${place}` : undefined;
  const link = entry?.role === 'key';
  return (
    <tr>
      <th scope="row">{name}</th>
      <td class="samples">{column.samples.join(' · ')}</td>
      <td>
        {entry || others.length === 0 ? (
          <EditSelect
            label={`Target of ${name}`}
            value={entry?.choice ?? ''}
            describedBy={shared}
            onChoose={(target) => edit({ kind: 'target', column: name, target })}
          >
            <option value="">(not imported)</option>
            {groups.map(([group, choices]) => (
              <optgroup key={group} label={group}>
                <Options choices={choices} />
              </optgroup>
            ))}
          </EditSelect>
        ) : null}
        {entry?.shared ? (
          <p class="also note" id={shared}>
            {entry.shared}
          </p>
        ) : null}
        {column.leftOut !== undefined && column.entries.length === 0 ? (
          <p class="also note">Not carried: {column.leftOut}</p>
        ) : null}
        {others.map((e) => (
          <p key={e.index} class="also">
            {e.summary} <span class="note">(edit in the YAML)</span>
          </p>
        ))}
      </td>
      <td>
        {entry?.types ? (
          <EditSelect
            label={`Type of ${name}`}
            value={entry.type}
            describedBy={shared}
            onChoose={(type) => edit({ kind: 'type', column: name, type })}
          >
            <Options choices={entry.types} />
          </EditSelect>
        ) : null}
        {entry?.services ? (
          <EditSelect
            label={`Service of ${name}`}
            value={entry.service}
            onChoose={(service) => edit({ kind: 'service', column: name, service })}
          >
            <Options choices={entry.services} />
          </EditSelect>
        ) : null}
      </td>
      <td>
        {entry && !link ? <Chain name={name} chain={entry.chain} transforms={view.transforms} edit={edit} /> : null}
      </td>
      <td>
        {entry ? (
          <input
            type="checkbox"
            aria-label={`${name} required`}
            aria-describedby={shared}
            checked={entry.required}
            onChange={(event) =>
              edit({ kind: 'required', column: name, required: (event.target as HTMLInputElement).checked })
            }
          />
        ) : null}
      </td>
      <td>
        {entry && !link ? (
          <EditSelect
            label={`A bad value in ${name}`}
            value={entry.onInvalid}
            describedBy={shared}
            onChoose={(chosen) => edit({ kind: 'onInvalid', column: name, onInvalid: chosen as OnInvalidChoice })}
          >
            {ON_INVALID_CHOICES.map((choice) => (
              <option key={choice} value={choice}>
                {ON_INVALID_WORDS[choice]}
              </option>
            ))}
          </EditSelect>
        ) : null}
      </td>
    </tr>
  );
}

/**
 * A column's transforms as a chain: each in the order it runs, with its options, moved earlier or
 * removed; another added at the end. Choosing one never drops the others (`trim` stays before `email`).
 */
function Chain({
  name,
  chain,
  transforms,
  edit,
}: {
  name: string;
  chain: ChainLink[];
  transforms: string[];
  edit: (e: MapEdit) => void;
}) {
  const send = (next: ChainLink[]): void => edit({ kind: 'chain', column: name, chain: next });
  const put = (at: number, link: ChainLink): void => send(chain.map((old, i) => (i === at ? link : old)));
  return (
    <div class="chain">
      {chain.length > 0 ? (
        <ol>
          {chain.map((link, i) => (
            <ChainStep
              key={`${i}-${link.transform}`}
              name={name}
              at={i}
              link={link}
              transforms={transforms}
              put={put}
              send={send}
              chain={chain}
            />
          ))}
        </ol>
      ) : null}
      <select
        aria-label={`Add a transform to ${name}`}
        value=""
        onChange={(event) => {
          const select = event.target as HTMLSelectElement;
          const chosen = select.value;
          select.value = '';
          if (chosen !== '') send([...chain, { transform: chosen, param: '' }]);
        }}
      >
        <option value="">{chain.length === 0 ? 'add a transform…' : 'add another…'}</option>
        {transforms.map((t) => (
          <option key={t} value={t}>
            {t}
          </option>
        ))}
      </select>
    </div>
  );
}

function ChainStep(props: {
  name: string;
  at: number;
  link: ChainLink;
  transforms: string[];
  chain: ChainLink[];
  put: (at: number, link: ChainLink) => void;
  send: (chain: ChainLink[]) => void;
}) {
  const { name, at, link, chain } = props;
  const [param, setParam] = useChoice(link.param);
  const place = `${at + 1} of ${name}`;
  const moved = (): ChainLink[] => {
    const next = [...chain];
    [next[at - 1], next[at]] = [next[at] as ChainLink, next[at - 1] as ChainLink];
    return next;
  };
  return (
    <li>
      <EditSelect
        label={`Transform ${place}`}
        value={link.transform}
        onChoose={(transform) => props.put(at, { transform, param: '' })}
      >
        {props.transforms.map((t) => (
          <option key={t} value={t}>
            {t}
          </option>
        ))}
      </EditSelect>
      <input
        type="text"
        aria-label={`Options of transform ${place}`}
        placeholder="options"
        value={param}
        size={8}
        onInput={(event) => setParam((event.target as HTMLInputElement).value)}
        onChange={() => props.put(at, { transform: link.transform, param })}
      />
      {at > 0 ? (
        <button
          type="button"
          class="small"
          aria-label={`Move transform ${place} earlier`}
          onClick={() => props.send(moved())}
        >
          ↑
        </button>
      ) : null}
      <button
        type="button"
        class="small"
        aria-label={`Remove transform ${place}`}
        onClick={() => props.send(chain.filter((_, i) => i !== at))}
      >
        ✕
      </button>
    </li>
  );
}

function statusWords(row: PreviewRow): string {
  return row.status === 'ok' ? 'ok' : row.status === 'rejected' ? 'rejected' : 'skipped';
}

function Preview({ view }: { view: Mapping }) {
  const rejected = view.preview.filter((r) => r.status === 'rejected').length;
  const warned = view.preview.filter((r) =>
    Object.values(r.marks).some((marks) => marks.some((m) => m.kind === 'warning')),
  ).length;
  return (
    <>
      <h2>The first rows, mapped</h2>
      <p class="note" role="status">
        {view.preview.length === 0
          ? 'No row mapped: fix the mapping first.'
          : `${view.preview.length} rows: ${rejected} rejected, ${warned} with a warning.`}
      </p>
      {view.preview.length > 0 ? (
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scroll area is reached by keyboard to scroll it (axe: scrollable-region-focusable)
        <section class="scroll rows" tabIndex={0} aria-label="The first rows, mapped">
          <table class="grid preview">
            <caption>
              First {view.preview.length} rows of {view.input}
            </caption>
            <thead>
              <tr>
                <th scope="col">Row</th>
                <th scope="col">Outcome</th>
                <th scope="col">What the row becomes</th>
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
                  <td class="record" data-column="record">
                    {row.record}
                  </td>
                  {view.columns.map((c) => {
                    const marks = row.marks[c.name] ?? [];
                    return (
                      <td
                        key={c.name}
                        class={
                          marks.some((m) => m.kind === 'rejected')
                            ? 'cell-rejected'
                            : marks.length > 0
                              ? 'cell-warning'
                              : undefined
                        }
                        data-column={c.name}
                      >
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
        </section>
      ) : null}
    </>
  );
}
