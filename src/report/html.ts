import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { FerryError } from '../errors/index.ts';
import type { VerifyDifference, VerifyNotCarried } from '../verify/index.ts';
import type { UsageSample } from './quota-usage.ts';
import { writeFileAtomic } from '../files/index.ts';
import { formatCount } from '../util/index.ts';

export type ReportCommand = 'run' | 'import' | 'verify' | 'rollback';

/** One count of a step: `key` is the summary's name for it (what `--json` prints), `label` what a person reads. */
export interface ReportCount {
  key: string;
  label: string;
  value: number;
}

export interface ReportStep {
  name: string;
  /** The input and the mapping, as shown; null when the command does not know them (rollback). */
  source: string | null;
  counts: ReportCount[];
  /** Records written with something left out or changed, by warning code, when the summary counts them. */
  warnings?: Record<string, number>;
}

export interface ReasonExample {
  row: number | null;
  key: string | null;
  field: string;
  message: string;
}

/** Rows of one step refused (or written with a warning) for one reason. */
export interface ReasonGroup {
  step: string;
  kind: 'rejected' | 'warning';
  code: string;
  count: number;
  /** A few rows, as examples. */
  examples: ReasonExample[];
}

/** Something of the source the account did not get, and how much of it. */
export interface ReportNotCarried {
  step: string;
  what: string;
  count: number;
  /** Where the rows are listed, when a file lists them. */
  where?: string;
}

export interface ReportInput {
  command: ReportCommand;
  /** The crm-ferry version. */
  version: string;
  /** The plan (or mapping and input, or state folder) the command was given. */
  plan: string;
  /** The account's address (never a token). */
  account: string;
  /** When the command ended. */
  finishedAt: Date;
  elapsedMs: number;
  requests: number;
  /** The closing line of the command's summary, and whether it needs attention. */
  outcome: { text: string; status: 'ok' | 'attention' | 'stopped' };
  steps: ReportStep[];
  reasons: ReasonGroup[];
  notCarried: ReportNotCarried[];
  usage: UsageSample[];
  /** verify only. */
  differences?: VerifyDifference[];
  differencesFile?: string;
  /** verify only: the rows and values the runs did not carry, by decision, each with its reason. */
  notCarriedItems?: VerifyNotCarried[];
  notCarriedFile?: string;
  /** verify only: what the check could not look at (`what` names it for the page's markup), as the summary says it. */
  notChecked?: Array<{ what: string; text: string }>;
  /** Files the command wrote, for the person to open next. */
  files?: Array<{ label: string; path: string }>;
}

/** Differences listed in the page at most; the CSV has them all. */
export const DIFFERENCES_SHOWN = 500;

/** Text made safe for HTML, in element content and in quoted attributes alike. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
}

const esc = escapeHtml;

function number(value: number): string {
  return formatCount(value);
}

function duration(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return minutes < 60
    ? `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`
    : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

const TITLES: Record<ReportCommand, string> = {
  run: 'Migration run',
  import: 'Import',
  verify: 'Verification of the account against the source',
  rollback: 'Rollback',
};

const STYLE = `
:root { color-scheme: light; --ink: #1d2430; --muted: #5b6472; --line: #d5dae1; --ok: #1f7a3a; --warn: #9a5b00; --bad: #b3261e; --accent: #2457a6; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: var(--ink); margin: 2rem auto; max-width: 64rem; padding: 0 1.25rem; }
h1 { font-size: 1.6rem; margin: 0 0 .75rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 .5rem; border-bottom: 1px solid var(--line); padding-bottom: .25rem; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 0 0 1rem; }
dl.meta dt { color: var(--muted); }
dl.meta dd { margin: 0; overflow-wrap: anywhere; }
.outcome { font-weight: 600; padding: .6rem .8rem; border-left: 4px solid; background: #f6f7f9; }
.outcome.ok { border-color: var(--ok); } .outcome.attention { border-color: var(--warn); } .outcome.stopped { border-color: var(--bad); }
table { border-collapse: collapse; width: 100%; margin: .5rem 0; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #f0f2f5; font-weight: 600; }
td.n, th.n { text-align: right; }
td.zero { color: var(--muted); }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; overflow-wrap: anywhere; }
/* A key is read as one word: it never breaks inside (C000 / 01 would be two other keys). */
code.key, td.key { white-space: nowrap; overflow-wrap: normal; }
table.differences, table.not-carried { table-layout: auto; }
table.differences td, table.not-carried td { overflow-wrap: anywhere; }
.answer { font-size: 1.15rem; font-weight: 600; margin: 0 0 1rem; }
.muted { color: var(--muted); }
ul.examples { margin: 0; padding-left: 1.1rem; }
figure { margin: .5rem 0; }
figcaption { color: var(--muted); font-size: .9rem; }
svg.usage-chart { width: 100%; max-width: 46rem; height: auto; border: 1px solid var(--line); background: #fff; }
svg text { font: 11px system-ui, sans-serif; fill: var(--muted); }
.legend-requests { color: var(--accent); } .legend-quota { color: var(--warn); }
footer { margin-top: 2.5rem; color: var(--muted); font-size: .85rem; }
@page { size: A4; margin: 14mm 12mm; }
@media print {
  body { margin: 0; max-width: none; padding: 0; font-size: 9.5pt; }
  h1 { font-size: 15pt; } h2 { font-size: 12pt; break-after: avoid; }
  table, figure { break-inside: auto; }
  tr { break-inside: avoid; }
  th, td { padding: .2rem .3rem; }
  thead { display: table-header-group; }
  .outcome { background: none; }
  svg.usage-chart { max-width: 100%; }
}
`;

function meta(input: ReportInput): string {
  const rows: Array<[string, string]> = [
    ['crm-ferry', `version ${input.version}`],
    [input.command === 'rollback' ? 'State' : 'Plan', input.plan],
    ['Account', input.account],
    [
      'Finished',
      input.finishedAt
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d{3}Z$/, ' UTC'),
    ],
    ['Duration', duration(input.elapsedMs)],
    ['Requests', number(input.requests)],
  ];
  return `<dl class="meta">${rows.map(([k, v]) => `<dt>${esc(k)}</dt><dd data-meta="${esc(k.toLowerCase())}">${esc(v)}</dd>`).join('')}</dl>`;
}

function countsTable(steps: readonly ReportStep[]): string {
  if (steps.length === 0) return '<p class="muted">No step.</p>';
  // One row per kind of count, one column per step: readable printed with a handful of steps.
  const labels = new Map<string, string>();
  for (const step of steps) for (const c of step.counts) if (!labels.has(c.key)) labels.set(c.key, c.label);
  const head = `<tr><th scope="col">Count</th>${steps.map((s) => `<th scope="col" class="n">${esc(s.name)}</th>`).join('')}</tr>`;
  const body = [...labels].map(([key, label]) => {
    const cells = steps.map((s) => {
      const count = s.counts.find((c) => c.key === key);
      if (!count) return '<td class="n zero">–</td>';
      return `<td class="n${count.value === 0 ? ' zero' : ''}" data-step="${esc(s.name)}" data-count="${esc(key)}">${esc(number(count.value))}</td>`;
    });
    return `<tr><th scope="row">${esc(label)}</th>${cells.join('')}</tr>`;
  });
  const sources = steps.filter((s) => s.source !== null);
  const list =
    sources.length > 0
      ? `<ul>${sources.map((s) => `<li><strong>${esc(s.name)}</strong>: <span class="mono">${esc(s.source)}</span></li>`).join('')}</ul>`
      : '';
  return `${list}<table class="counts"><thead>${head}</thead><tbody>${body.join('')}</tbody></table>`;
}

function reasonsTable(input: ReportInput): string {
  const warnings: ReasonGroup[] = [];
  for (const step of input.steps) {
    for (const [code, count] of Object.entries(step.warnings ?? {})) {
      if (count > 0 && !input.reasons.some((r) => r.kind === 'warning' && r.step === step.name && r.code === code))
        warnings.push({ step: step.name, kind: 'warning', code, count, examples: [] });
    }
  }
  const groups = [...input.reasons, ...warnings];
  if (groups.length === 0) return '<p class="muted">No row was rejected, and none was written with a warning.</p>';
  const rows = groups.map((g) => {
    const examples =
      g.examples.length === 0
        ? '<span class="muted">see the results files</span>'
        : `<ul class="examples">${g.examples
            .map(
              (e) =>
                `<li>${e.row !== null ? `row ${esc(e.row)}` : 'no row'}${e.key ? `, key <code>${esc(e.key)}</code>` : ''}${e.field ? `, <code>${esc(e.field)}</code>` : ''}: ${esc(e.message)}</li>`,
            )
            .join('')}</ul>`;
    return `<tr data-kind="${esc(g.kind)}" data-step="${esc(g.step)}" data-code="${esc(g.code)}"><td>${esc(g.step)}</td><td>${g.kind === 'rejected' ? 'rejected' : 'written with a warning'}</td><td><code>${esc(g.code)}</code></td><td class="n">${esc(number(g.count))}</td><td>${examples}</td></tr>`;
  });
  return `<table class="reasons"><thead><tr><th scope="col">Step</th><th scope="col">What</th><th scope="col">Reason</th><th scope="col" class="n">Rows</th><th scope="col">Examples</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function notCarriedList(items: readonly ReportNotCarried[]): string {
  const shown = items.filter((i) => i.count > 0);
  if (shown.length === 0) return '<p class="muted">Everything the source held was carried.</p>';
  return `<ul class="not-carried">${shown.map((i) => `<li><strong>${esc(i.step)}</strong>: ${esc(number(i.count))} ${esc(i.what)}${i.where ? ` (listed in <span class="mono">${esc(i.where)}</span>)` : ''}</li>`).join('')}</ul>`;
}

const W = 720;
const H = 240;
const PAD = { left: 56, right: 56, top: 16, bottom: 34 };

/**
 * Requests sent over time and, when the service said its quota, the requests left in its
 * rate-limit window, as an inline SVG (two lines, each on its own scale).
 */
export function usageChart(samples: readonly UsageSample[]): string {
  if (samples.length === 0) return '<p class="muted">No requests were recorded.</p>';
  const first = samples[0] as UsageSample;
  const points = samples.length === 1 ? [first, { ...first, atMs: first.atMs + 1 }] : samples;
  const endMs = Math.max(1, (points[points.length - 1] as UsageSample).atMs);
  const maxRequests = Math.max(1, ...points.map((p) => p.requests));
  const withQuota = points.filter((p) => p.remaining !== null);
  const maxLeft = Math.max(1, ...withQuota.map((p) => p.remaining as number));
  const x = (ms: number): number => PAD.left + (ms / endMs) * (W - PAD.left - PAD.right);
  const y = (share: number): number => H - PAD.bottom - share * (H - PAD.top - PAD.bottom);
  const line = (values: Array<[number, number]>): string =>
    values.map(([px, py]) => `${px.toFixed(1)},${py.toFixed(1)}`).join(' ');
  const requests = line(points.map((p) => [x(p.atMs), y(p.requests / maxRequests)]));
  const quota =
    withQuota.length > 0 ? line(withQuota.map((p) => [x(p.atMs), y((p.remaining as number) / maxLeft)])) : null;
  const grid = [0, 0.5, 1]
    .map(
      (share) =>
        `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(share).toFixed(1)}" y2="${y(share).toFixed(1)}" stroke="#e3e7ec"/><text x="${PAD.left - 6}" y="${(y(share) + 4).toFixed(1)}" text-anchor="end">${esc(number(Math.round(maxRequests * share)))}</text>${
          quota
            ? `<text x="${W - PAD.right + 6}" y="${(y(share) + 4).toFixed(1)}">${esc(number(Math.round(maxLeft * share)))}</text>`
            : ''
        }`,
    )
    .join('');
  const axis = `<text x="${PAD.left}" y="${H - 10}">0</text><text x="${W - PAD.right}" y="${H - 10}" text-anchor="end">${esc(duration(endMs))}</text><text x="${W / 2}" y="${H - 10}" text-anchor="middle">time since the start</text>`;
  const perHour = withQuota.find((p) => p.limit !== null)?.limit ?? null;
  const fewest = withQuota.length > 0 ? Math.min(...withQuota.map((p) => p.remaining as number)) : null;
  const label = `Requests sent over ${duration(endMs)}: ${number(maxRequests)} in all${
    fewest !== null
      ? `; the fewest requests left in a rate-limit window: ${number(fewest)}${perHour !== null ? ` (the account allows ${number(perHour)} an hour)` : ''}`
      : ''
  }.`;
  return `<figure><svg class="usage-chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(label)}" xmlns="http://www.w3.org/2000/svg"><title>${esc(label)}</title>${grid}${axis}<polyline class="requests" fill="none" stroke="#2457a6" stroke-width="2" points="${requests}"/>${
    quota
      ? `<polyline class="quota" fill="none" stroke="#9a5b00" stroke-width="1.5" stroke-dasharray="5 3" points="${quota}"/>`
      : ''
  }</svg><figcaption><span class="legend-requests">━ requests sent so far</span> (left scale)${
    quota
      ? ' · <span class="legend-quota">╌ requests left in the rate-limit window</span> (right scale)'
      : ' · the service did not say its rate limit'
  }. ${esc(label)}</figcaption></figure>`;
}

/** What each kind of difference means, in a word or two for the table. */
const DIFFERENCE_WORDS: Record<VerifyDifference['kind'], string> = {
  missing: 'missing',
  extra: 'extra',
  differs: 'differs',
  unresolved: 'link not made',
};

function differencesTable(input: ReportInput): string {
  const all = input.differences ?? [];
  if (all.length === 0)
    return '<p class="outcome ok">No difference: every row carried is in the account as in the file.</p>';
  const shown = all.slice(0, DIFFERENCES_SHOWN);
  const rows = shown.map(
    (d) =>
      `<tr data-kind="${esc(d.kind)}" data-step="${esc(d.step)}" data-key="${esc(d.key)}" data-field="${esc(d.field)}" data-changed-in="${esc(d.changedIn)}"><td>${esc(d.step)}</td><td>${esc(DIFFERENCE_WORDS[d.kind])}</td><td>${d.changedIn === 'account' ? 'the account' : 'the file'}</td><td class="n">${d.row === null ? '' : esc(d.row)}</td><td class="key"><code class="key">${esc(d.key)}</code></td><td><code>${esc(d.field)}</code></td><td class="mono">${esc(d.inFile)}</td><td class="mono">${esc(d.inAccount)}</td></tr>`,
  );
  const more =
    all.length > shown.length
      ? `<p>${esc(number(all.length - shown.length))} more differences are in the differences file.</p>`
      : '';
  const file = input.differencesFile
    ? `<p>Every difference, one a line: <span class="mono">${esc(input.differencesFile)}</span></p>`
    : '';
  return `${file}<table class="differences"><thead><tr><th scope="col">Step</th><th scope="col">What</th><th scope="col">Changed in</th><th scope="col" class="n">Row</th><th scope="col">Key</th><th scope="col">Field</th><th scope="col">In the file</th><th scope="col">In the account</th></tr></thead><tbody>${rows.join('')}</tbody></table>${more}`;
}

/**
 * The rows the runs rejected and the values they left out, each with its reason in the data
 * owner's words, and the rule's place in the mapping in a column of its own.
 */
function notCarriedTable(
  items: readonly VerifyNotCarried[],
  kind: VerifyNotCarried['kind'],
  file: string | undefined,
): string {
  const mine = items.filter((item) => item.kind === kind);
  if (mine.length === 0)
    return kind === 'rejected'
      ? '<p class="muted">The runs rejected no row.</p>'
      : '<p class="muted">The runs left no value out.</p>';
  const shown = mine.slice(0, DIFFERENCES_SHOWN);
  const rows = shown.map(
    (n) =>
      `<tr data-kind="${esc(n.kind)}" data-step="${esc(n.step)}" data-key="${esc(n.key)}" data-row="${esc(n.row)}"><td>${esc(n.step)}</td><td class="n">${esc(n.row)}</td><td class="key"><code class="key">${esc(n.key)}</code></td>${kind === 'dropped' ? `<td>${esc(n.column)}</td><td class="mono">${esc(n.value)}</td>` : ''}<td class="reason">${esc(n.reason)}</td><td><code>${esc(n.rule)}</code></td></tr>`,
  );
  const more =
    mine.length > shown.length ? `<p>${esc(number(mine.length - shown.length))} more are in the file.</p>` : '';
  const where = file ? `<p>Each with its reason, one a line: <span class="mono">${esc(file)}</span></p>` : '';
  const head = `<th scope="col">Step</th><th scope="col" class="n">Row</th><th scope="col">Key</th>${kind === 'dropped' ? '<th scope="col">Column</th><th scope="col">Value</th>' : ''}<th scope="col">Reason</th><th scope="col">Rule in the mapping</th>`;
  return `${where}<table class="not-carried ${esc(kind)}"><thead><tr>${head}</tr></thead><tbody>${rows.join('')}</tbody></table>${more}`;
}

/**
 * One self-contained HTML page about a command's run: no script, no style sheet or font or image
 * from elsewhere (a Content-Security-Policy says so to the browser), readable printed. Everything
 * that comes from the input, the account or the files is escaped.
 */
export function renderReport(input: ReportInput): string {
  const title = `${TITLES[input.command]}: ${input.plan}`;
  const sections: string[] = [];
  sections.push(`<section id="counts"><h2>Counts per step</h2>${countsTable(input.steps)}</section>`);
  if (input.command === 'verify') {
    sections.push(`<section id="differences"><h2>Differences</h2>${differencesTable(input)}</section>`);
    const items = input.notCarriedItems ?? [];
    sections.push(
      `<section id="rows-not-carried"><h2>Rows not carried, and why</h2>${notCarriedTable(items, 'rejected', input.notCarriedFile)}</section>`,
    );
    sections.push(
      `<section id="values-left-out"><h2>Values left out, and why</h2>${notCarriedTable(items, 'dropped', input.notCarriedFile)}</section>`,
    );
  }
  // Right after the differences: "no difference" holds only for what was looked at.
  if (input.notChecked && input.notChecked.length > 0) {
    sections.push(
      `<section id="not-checked"><h2>What was not checked</h2><ul>${input.notChecked.map((n) => `<li data-not-checked="${esc(n.what)}">${esc(n.text)}</li>`).join('')}</ul></section>`,
    );
  }
  if (input.command === 'run' || input.command === 'import')
    sections.push(
      `<section id="reasons"><h2>Rejected rows and warnings, by reason</h2>${reasonsTable(input)}</section>`,
    );
  if (input.command !== 'rollback') {
    sections.push(
      `<section id="not-carried"><h2>What was not carried</h2>${notCarriedList(input.notCarried)}</section>`,
    );
  }
  sections.push(`<section id="usage"><h2>Requests and quota over time</h2>${usageChart(input.usage)}</section>`);
  if (input.files && input.files.length > 0) {
    sections.push(
      `<section id="files"><h2>Files</h2><ul>${input.files.map((f) => `<li>${esc(f.label)}: <span class="mono">${esc(f.path)}</span></li>`).join('')}</ul></section>`,
    );
  }
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="crm-ferry ${esc(input.version)}">
<title>${esc(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>${esc(TITLES[input.command])}</h1>
<p class="outcome answer ${esc(input.outcome.status)}">${esc(input.outcome.text)}</p>
${meta(input)}
</header>
<main>
${sections.join('\n')}
</main>
<footer>Written by crm-ferry ${esc(input.version)} (<code>crm-ferry ${esc(input.command)}</code>). This page needs no network and no script.</footer>
</body>
</html>
`;
}

/** Writes the page whole under a temporary name and renames it, so that a half-written report is never left behind. */
export async function writeReport(file: string, html: string): Promise<void> {
  try {
    await mkdir(dirname(file), { recursive: true });
    await writeFileAtomic(file, html);
  } catch (error) {
    throw new FerryError('EXPORT_WRITE', `cannot write the report ${file}: ${(error as Error).message}`, {
      location: { file },
      cause: error,
      hint: 'Give --report a file in a folder you can write to.',
    });
  }
}
