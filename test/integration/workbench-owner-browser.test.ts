import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/fake-io.ts';
import { jargonIn } from '../helpers/glossary.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';
import {
  axeViolations,
  type BrowserBench,
  laidOut,
  openBrowserBench,
  select,
  yamlShows,
} from '../helpers/workbench-browser.ts';

/**
 * The workbench as the data owner meets it, in Debian's chromium by role and label: the
 * transforms as a chain, the question before unsaved edits are left, the Run view's rejected rows
 * with their reasons, the rejects file and the next step in words, the latest run whoever started
 * it (the page, the command line) or undone, the page's words (no mapping path, option name, flag
 * or run id in any view), and the layout at 1280 px and on a laptop (1366 x 768).
 */
const dir = mkdtempSync(join(tmpdir(), 'ferry-wb-owner-'));
let box: TestSandbox;
let open: BrowserBench;
let page: Page;
const violations: string[] = [];
const jargon: string[] = [];
const env = (): NodeJS.ProcessEnv => ({
  ...process.env,
  CRM_FERRY_BASE_URL: box.url,
  CRM_FERRY_TOKEN: box.token,
  CRM_FERRY_PROFILE: undefined,
});

const ROWS = [
  'id,first,last,email,since',
  '1,Jan,Bakker,jan@bakker.nl,2020-01-15',
  '2,Piet,Jansen,piet@@jansen.nl,2021-03-01',
  '3,Els,Vos,els@vos.nl,2019-07-30',
  '4,Kim,Smit,kim at smit,2018-02-02',
];

beforeAll(async () => {
  box = await startTestSandbox({ faults: { errorRate: 0, dropAfterWriteRate: 0, latencyMs: 0, latencyJitterMs: 0 } });
  writeFileSync(join(dir, 'leden.csv'), `${ROWS.join('\n')}\n`);
  // The mapping as a person left it: the e-mail only trimmed, a bad address rejecting its row, and
  // a custom field the account lacks (its cells marked, in the page's words).
  writeFileSync(
    join(dir, 'leden.mapping.yaml'),
    [
      'version: 1',
      'entity: party',
      'key: "{{id}}"',
      'fields:',
      '  - to: firstName',
      '    value: {column: "first", transform: [trim]}',
      '  - to: lastName',
      '    value: {column: "last", transform: [trim]}',
      '  - to: email',
      '    type: Work',
      '    onInvalid: reject',
      '    # the address is only trimmed',
      '    value: {column: "email", transform: [trim]}',
      '  - to: custom',
      '    definition: "Lid sinds"',
      '    tag: null',
      '    value: {column: "since", transform: [date]}',
      '',
    ].join('\n'),
  );
  open = await openBrowserBench(box, dir);
  page = open.page;
}, 120_000);

afterAll(async () => {
  await open?.stop();
  await box?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Notes axe-core's serious violations and the jargon in the view's text. */
async function look(view: string): Promise<void> {
  for (const found of await axeViolations(page)) violations.push(`${view}: ${found}`);
  // biome-ignore lint/performance/useDomNodeTextContent: the text a person sees, not that of closed dialogs and hidden nodes
  const text = await page.evaluate(() => (globalThis as any).document.body.innerText as string);
  for (const found of jargonIn(text)) jargon.push(`${view}: ${found}`);
}

const nav = (name: string) => page.getByRole('navigation').getByRole('link', { name, exact: true });

describe('the workbench for the data owner, in headless Chromium', () => {
  it('chains transforms, asks before unsaved edits are left, shows the rejected rows of a run with the next step, the latest run from the command line and undone, in plain words, laid out without overlap', async () => {
    const layout: string[] = [];
    await page.goto(open.bench.url);
    await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
    layout.push(...(await laidOut(page, 'Files')));
    await page.getByRole('link', { name: 'Map leden.csv' }).click();
    await page.getByRole('heading', { name: 'Map leden.csv' }).waitFor();
    // The account has no custom field "Lid sinds": said in the page's words on its cells.
    await page
      .locator('tr[data-row="2"] td[data-column="since"]')
      .filter({ hasText: 'Rejected: Unknown custom field Lid sinds of people and organisations' })
      .waitFor();
    await look('Map, as saved');
    layout.push(...(await laidOut(page, 'Map')));
    const region = page.getByRole('region', { name: 'The first rows, mapped' });
    // What the row becomes is in view without scrolling the first rows sideways.
    const record = page.locator('tr[data-row="2"] td[data-column="record"]');
    const [recordBox, regionBox] = [await record.boundingBox(), await region.boundingBox()];
    expect(recordBox && regionBox && recordBox.x + recordBox.width <= regionBox.x + regionBox.width).toBe(true);

    // The custom field left out, then the e-mail check added after trim: trim stays, in order.
    await select(page, 'Target of since').selectOption({ label: '(not imported)' });
    await yamlShows(page, 'Lid sinds', false);
    await select(page, 'Add a transform to email').selectOption({ label: 'email' });
    await yamlShows(page, 'value: {column: "email", transform: [trim, email]}');
    // The comment that said why the old chain was chosen is gone with it.
    await yamlShows(page, '# the address is only trimmed', false);
    expect(await select(page, 'Transform 1 of email').inputValue()).toBe('trim');
    expect(await select(page, 'Transform 2 of email').inputValue()).toBe('email');
    await page.getByText('4 rows: 2 rejected, 0 with a warning.').waitFor();
    // Moved, then put back; a link removed and added again.
    await page.getByRole('button', { name: 'Move transform 2 of email earlier' }).click();
    await yamlShows(page, 'transform: [email, trim]');
    await page.getByRole('button', { name: 'Move transform 2 of email earlier' }).click();
    await yamlShows(page, 'transform: [trim, email]');
    await page.getByRole('button', { name: 'Remove transform 2 of email' }).click();
    await yamlShows(page, 'value: {column: "email", transform: [trim]}');
    await select(page, 'Add a transform to email').selectOption({ label: 'email' });
    await yamlShows(page, 'transform: [trim, email]');
    await page
      .locator('tr[data-row="3"] td[data-column="email"]')
      .filter({ hasText: 'is not an e-mail address' })
      .waitFor();
    await look('Map, edited');

    // Unsaved: another view is not opened without a question; staying keeps the edits.
    await nav('Check').click();
    const question = page.getByRole('dialog', { name: 'Leave without saving?' });
    await question.waitFor();
    for (const found of await axeViolations(page)) violations.push(`the question: ${found}`);
    await question.getByRole('button', { name: 'Stay and keep the changes' }).click();
    await question.waitFor({ state: 'hidden' });
    expect(page.url()).toBe(`${open.bench.origin}/map?input=leden.csv`);
    await yamlShows(page, 'transform: [trim, email]');
    // Back in the browser asks too.
    await page.goBack();
    await question.waitFor();
    await question.getByRole('button', { name: 'Stay and keep the changes' }).click();
    expect(page.url()).toBe(`${open.bench.origin}/map?input=leden.csv`);
    await page.getByRole('heading', { name: 'Map leden.csv' }).waitFor();
    // Leaving without saving: the edits are gone, the file as it was.
    await nav('Files').click();
    await question.waitFor();
    await question.getByRole('button', { name: 'Leave without saving' }).click();
    await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
    expect(readFileSync(join(dir, 'leden.mapping.yaml'), 'utf8')).toContain('transform: [trim]}');
    await page.getByRole('link', { name: 'Map leden.csv' }).click();
    await page.getByRole('heading', { name: 'Map leden.csv' }).waitFor();
    await yamlShows(page, 'Lid sinds');
    await select(page, 'Target of since').selectOption({ label: '(not imported)' });
    await yamlShows(page, 'Lid sinds', false);
    await select(page, 'Add a transform to email').selectOption({ label: 'email' });
    await yamlShows(page, 'transform: [trim, email]');
    await page.getByRole('button', { name: 'Save mapping' }).click();
    await page.getByText(/^Saved leden\.mapping\.yaml/).waitFor();
    // Saved: no question.
    await nav('Check').click();
    await page.getByRole('heading', { name: 'Check', level: 1 }).waitFor();
    expect(await question.isVisible()).toBe(false);

    // Check: the rejected rows with reasons; its files under .crm-ferry/, none at the folder's top.
    await page.getByRole('button', { name: 'Check every row' }).click();
    await page.getByRole('table', { name: /Rejected rows of leden/ }).waitFor();
    await page.locator('[data-check="requests"]').waitFor();
    expect(readdirSync(dir).filter((name) => /rejects|warnings/.test(name))).toEqual([]);
    expect(readdirSync(join(dir, '.crm-ferry', 'check'))).toContain('leden.rejects.csv');
    await look('Check');
    layout.push(...(await laidOut(page, 'Check')));

    // Run everything: two rows in, two rejected, each with its reason; the file linked; the next step in words.
    await nav('Run').click();
    await page.getByRole('button', { name: 'Run everything' }).click();
    const latest = page.locator('[data-latest="state"]');
    await latest.filter({ hasText: /^Ended .*: 2 created, 0 updated, 2 rejected\.$/ }).waitFor();
    expect(await latest.textContent()).not.toContain('outside this page');
    await page
      .locator('[data-run="outcome"]')
      .filter({ hasText: 'fix the file or the mapping, then Run everything again: only the rejected rows are sent' })
      .waitFor();
    expect(await page.locator('[data-latest="next"]').textContent()).toBe(
      'Next: fix the file or the mapping, then Run everything again: only the rejected rows are sent.',
    );
    const rejects = page.getByRole('table', { name: /Rejected rows of leden/ });
    expect(await rejects.getByRole('row', { name: /^3 / }).textContent()).toContain(
      '"piet@@jansen.nl" is not an e-mail address',
    );
    expect(await rejects.getByRole('row', { name: /^5 / }).textContent()).toContain(
      '"kim at smit" is not an e-mail address',
    );
    const link = rejects.getByRole('link', { name: '.crm-ferry/results/leden.rejects.csv' });
    const download = await page.request.get(
      new URL((await link.getAttribute('href')) as string, open.bench.origin).href,
    );
    expect(download.status()).toBe(200);
    expect(download.headers()['content-disposition']).toContain('attachment');
    expect(await download.text()).toContain('piet@@jansen.nl');
    // biome-ignore lint/performance/useDomNodeTextContent: the text a person sees
    const text = await page.evaluate(() => (globalThis as any).document.body.innerText as string);
    expect(text).not.toMatch(/--retry-rejects|validate --input/);
    await look('Run, with rejects');
    layout.push(...(await laidOut(page, 'Run')));

    // The file fixed and run from the command line in the folder: the page shows that run.
    writeFileSync(
      join(dir, 'leden.csv'),
      `${ROWS.map((row) => row.replace('piet@@jansen.nl', 'piet@jansen.nl').replace('kim at smit', 'kim@smit.nl')).join('\n')}\n`,
    );
    const cli = await runCli(['run', 'plan.yaml'], { cwd: dir, env: env() });
    expect(cli.code, cli.stdout + cli.stderr).toBe(0);
    await page.reload();
    await latest
      .filter({
        hasText:
          /^Ended .* \(started outside this page: on the command line, or by an earlier workbench\): 2 created, 0 updated, 0 rejected\.$/,
      })
      .waitFor();
    expect(await page.getByRole('table', { name: /Rejected rows/ }).count()).toBe(0);
    await look('Run, after the command line');

    // Undone in the page: the Run view says so rather than showing the run as the current one.
    await nav('Undo').click();
    await page.getByRole('button', { name: 'Undo the last run…' }).click();
    const confirm = page.getByRole('dialog', { name: 'Undo the last run?' });
    await confirm.getByRole('button', { name: 'Delete and set back' }).click();
    await page.locator('[data-undo="outcome"]').waitFor();
    await look('Undo');
    layout.push(...(await laidOut(page, 'Undo')));
    await nav('Run').click();
    await latest
      .filter({
        hasText: /^Undone: what the run of .* wrote was deleted and set back\. Run everything writes the rows again\.$/,
      })
      .waitFor();
    await look('Run, undone');

    expect(open.seen.problems).toEqual([]);
    expect(open.seen.elsewhere).toEqual([]);
    expect(violations).toEqual([]);
    expect(jargon).toEqual([]);
    expect(layout).toEqual([]);
  }, 240_000);

  it('says warnings, a check and a run that cannot start, and a YAML problem in the same plain words', async () => {
    // A custom field the account lacks: the check and the run stop before reading a row, and say why.
    writeFileSync(join(dir, 'leden.csv'), `${ROWS.join('\n')}\n`);
    const mapping = readFileSync(join(dir, 'leden.mapping.yaml'), 'utf8').replace(
      'onInvalid: reject',
      'onInvalid: drop',
    );
    writeFileSync(
      join(dir, 'leden.mapping.yaml'),
      `${mapping.trimEnd()}\n  - to: custom\n    definition: "Lid sinds"\n    tag: null\n    value: {column: "since", transform: [date]}\n`,
    );
    await nav('Check').click();
    await page.getByRole('button', { name: 'Check every row' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: 'It stopped: unknown custom field Lid sinds of people and organisations' })
      .waitFor();
    await look('Check, stopped');
    await nav('Run').click();
    await page.getByRole('button', { name: 'Run everything' }).click();
    await page.getByRole('alert').filter({ hasText: 'It stopped:' }).waitFor();
    await look('Run, stopped');
    // Without it: the bad addresses are left out of their records, with a warning each.
    writeFileSync(join(dir, 'leden.mapping.yaml'), mapping);
    await nav('Check').click();
    await page.getByRole('button', { name: 'Check every row' }).click();
    await page.getByText(/^value left out: 2$/).waitFor();
    await page.locator('[data-check="requests"]').waitFor();
    await look('Check, with warnings');
    // A YAML problem: said with its line, in words.
    await page.goto(`${open.bench.origin}/map?input=leden.csv`);
    const yaml = page.getByRole('textbox', { name: 'Mapping YAML' });
    await yamlShows(page, 'transform: [trim, email]');
    await yaml.fill((await yaml.inputValue()).replace('transform: [trim, email]', 'transform: [trim, emial]'));
    await page.getByText(/^Line \d+: /).waitFor();
    await look('Map, a problem');
    expect(open.seen.problems).toEqual([]);
    expect(violations).toEqual([]);
    expect(jargon).toEqual([]);
  }, 120_000);
});
