import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMPORT_COUNTS, notListedText, VERIFY_COUNTS } from '../../src/report/index.ts';
import { runCli } from '../helpers/fake-io.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';
import { copyFromCheckout } from '../helpers/checkout-copy.ts';

/**
 * The HTML report in a real browser: Debian's chromium (installed by .ci/run when missing), driven
 * by playwright-core, which downloads no browser of its own. Scripts are off: the page needs none.
 */
const CHROMIUM = '/usr/bin/chromium';
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'ferry-report-'));
let box: TestSandbox;
let browser: BrowserContext;

const env = (): NodeJS.ProcessEnv => ({ CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token });

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium), as .ci/run does`);
  // A quota the service states, and some latency, so that the chart has a line of each over time.
  box = await startTestSandbox({
    rateLimit: { limit: 5000, windowSeconds: 3600 },
    faults: { errorRate: 0, dropAfterWriteRate: 0, latencyMs: 15, latencyJitterMs: 0 },
  });
  copyFileSync(join(ROOT, 'mappings/generic-organisations.yaml'), join(dir, 'organisations.yaml'));
  copyFileSync(join(ROOT, 'mappings/generic-people.yaml'), join(dir, 'people.yaml'));
  // Two people without a last name (the mapping requires one): rejected, with a reason and their rows.
  const contacts = readFileSync(join(ROOT, 'samples/contacts.csv'), 'utf8').trimEnd();
  writeFileSync(
    join(dir, 'contacts.csv'),
    `${contacts}\nZed,,zed@example.com,,Zed & <Co>,,,,,,,,\nYan,,yan@example.com,,Zed & <Co>,,,,,,,,\n`,
  );
  writeFileSync(
    join(dir, 'plan.yaml'),
    'version: 1\nsteps:\n  - { name: organisations, mapping: organisations.yaml, input: contacts.csv }\n  - { name: people, mapping: people.yaml, input: contacts.csv }\n',
  );
  browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'ferry-chromium-')), {
    executablePath: CHROMIUM,
    headless: true,
    javaScriptEnabled: false,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});

afterAll(async () => {
  await browser?.close();
  await box?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Opens a report; collects console errors, page errors and any request that is not the file itself. */
async function open(file: string): Promise<{ page: Page; problems: string[]; requests: string[] }> {
  const page = await browser.newPage();
  const problems: string[] = [];
  const requests: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('requestfailed', (request) => problems.push(`failed: ${request.url()}`));
  page.on('request', (request) => requests.push(request.url()));
  const url = pathToFileURL(file).href;
  await page.goto(url, { waitUntil: 'load' });
  return { page, problems, requests: requests.filter((r) => r !== url) };
}

/** The `end` event of a command's --json output. */
function endOf(stdout: string): { summary: any } {
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
    .find((event) => event.type === 'end');
}

async function countOf(page: Page, step: string, key: string): Promise<number> {
  const text = await page.locator(`td[data-step="${step}"][data-count="${key}"]`).textContent();
  return Number(String(text).replace(/,/g, ''));
}

describe('the HTML report in headless Chromium', () => {
  it('of a run: loads with no console error and nothing fetched, its counts are the --json summary, the chart is drawn, no token', async () => {
    const { code, stdout, stderr } = await runCli(['run', 'plan.yaml', '--json', '--report', 'run.html'], {
      cwd: dir,
      env: env(),
    });
    expect(code, stderr).toBe(3);
    const end = endOf(stdout);
    expect(stderr).toContain('Report: run.html');
    const file = join(dir, 'run.html');
    const html = readFileSync(file, 'utf8');
    expect(html).not.toContain(box.token);
    expect(html).not.toMatch(/<script|<link|src=|url\(/i);

    const { page, problems, requests } = await open(file);
    expect(problems).toEqual([]);
    expect(requests).toEqual([]);
    expect(await page.locator('[data-meta="account"]').textContent()).toBe(box.url);
    expect(await page.locator('[data-meta="plan"]').textContent()).toBe('plan.yaml');
    expect(await page.locator('[data-meta="crm-ferry"]').textContent()).toBe(
      `version ${JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version}`,
    );
    expect(end.summary.steps.map((s: { step: string }) => s.step)).toEqual(['organisations', 'people']);
    for (const step of end.summary.steps) {
      for (const [key] of IMPORT_COUNTS)
        expect(await countOf(page, step.step, key), `${step.step} ${key}`).toBe(step[key]);
    }
    expect(await countOf(page, 'people', 'rejected')).toBe(2);
    // The rejects by reason, with the rows as examples.
    const reason = page.locator('tr[data-kind="rejected"][data-step="people"]');
    expect(await reason.count()).toBe(1);
    expect(await reason.locator('td.n').textContent()).toBe('2');
    expect(await reason.textContent()).toMatch(/row 32, key zed@example\.com.*row 33, key yan@example\.com/);
    expect(await page.locator('#not-carried').textContent()).toMatch(/people: 2 rows rejected: not written/);

    // The chart: both lines drawn, with a point per sample, inside a box of real size.
    const requestsLine = page.locator('svg.usage-chart polyline.requests');
    const points = String(await requestsLine.getAttribute('points'))
      .trim()
      .split(/\s+/);
    expect(points.length).toBeGreaterThanOrEqual(2);
    const box1 = await requestsLine.boundingBox();
    expect(box1?.width).toBeGreaterThan(200);
    expect(box1?.height).toBeGreaterThan(20);
    expect(await page.locator('svg.usage-chart polyline.quota').count()).toBe(1);
    expect(await page.locator('svg.usage-chart title').textContent()).toContain(`${end.summary.requests} in all`);

    // Printed: the counts are still there, and a PDF comes out.
    await page.emulateMedia({ media: 'print' });
    expect(await page.locator('table.counts').isVisible()).toBe(true);
    expect((await page.pdf()).length).toBeGreaterThan(10_000);
    await page.close();
  });

  it('of verify: the answer first, the differences, the rows not carried with their reasons; keys on one line, printed on A4 without a cut column', async () => {
    const rows = readFileSync(join(dir, '.crm-ferry/results/people.success.csv'), 'utf8').split('\r\n');
    const id = Number((rows[1] as string).split(',')[3]);
    // Markup typed into the account, and a value too long for a column without a break in it.
    const typed = `<img src=x onerror=alert(1)> ${'x'.repeat(160)}`;
    expect((await box.v2('PUT', `/parties/${id}`, { party: { jobTitle: typed } })).status).toBe(200);
    const { code, stdout, stderr } = await runCli(['verify', 'plan.yaml', '--json', '--report', 'verify.html'], {
      cwd: dir,
      env: env(),
    });
    expect(code, stderr).toBe(3);
    const end = endOf(stdout);
    const { page, problems, requests } = await open(join(dir, 'verify.html'));
    expect(problems).toEqual([]);
    expect(requests).toEqual([]);
    for (const step of end.summary.steps) {
      for (const [key] of VERIFY_COUNTS)
        expect(await countOf(page, step.step, key), `${step.step} ${key}`).toBe(step[key]);
    }
    // The first sentence under the title answers "is my data there?".
    const answer = page.locator('header > h1 + p.answer');
    expect(await answer.textContent()).toMatch(
      /^The account differs from the file: 1 difference, each in the differences file\. \d+ of \d+ rows are in the account as in the file; 2 rows were not carried, each for the reason listed\.$/,
    );
    const differs = page.locator('tr[data-kind="differs"][data-field="jobTitle"]');
    expect(await differs.count()).toBe(1);
    // Shown as text, never as markup.
    expect(await differs.textContent()).toContain('<img src=x onerror=alert(1)>');
    expect(await page.locator('img').count()).toBe(0);
    // The two people without a last name were not carried, by decision: listed with their reasons, not as differences.
    expect(await page.locator('tr[data-kind="missing"]').count()).toBe(0);
    const notCarried = page.locator('#rows-not-carried tbody tr');
    expect(await notCarried.count()).toBe(2);
    expect(await notCarried.first().locator('td.reason').textContent()).toBe(
      'last_name is empty, and the mapping needs a value there',
    );
    expect(await page.locator('#rows-not-carried tr[data-key="zed@example.com"][data-row="32"]').count()).toBe(1);
    expect(await page.locator('#rows-not-carried th').allTextContents()).toContain('Rule in the mapping');
    expect(readFileSync(join(dir, 'verify.html'), 'utf8')).not.toContain(box.token);

    // Printed on A4 (210 mm less the page's margins of 12 mm a side: 703 px at 96 dpi): no table
    // reaches past the paper, and no key breaks over two lines.
    await page.emulateMedia({ media: 'print' });
    await page.setViewportSize({ width: 703, height: 1000 });
    for (const table of await page.locator('table').all()) {
      const box1 = await table.boundingBox();
      expect((box1?.x ?? 0) + (box1?.width ?? 0), (await table.getAttribute('class')) ?? 'table').toBeLessThanOrEqual(
        703,
      );
    }
    const oneLine = (await page.locator('tr[data-kind="differs"] td code').nth(1).boundingBox())?.height ?? 0;
    expect(oneLine).toBeGreaterThan(0);
    const keys = await page.locator('code.key').all();
    expect(keys.length).toBeGreaterThanOrEqual(3);
    for (const key of keys)
      expect((await key.boundingBox())?.height, (await key.textContent()) ?? '').toBeLessThan(oneLine * 1.5);
    expect((await page.pdf({ format: 'A4', preferCSSPageSize: true })).length).toBeGreaterThan(10_000);
    await page.close();
  });

  it("of verify: notes beyond the listing verify reads are said to be not checked, in the summary's words", async () => {
    // An account of its own, quick to fill: the bundled v1 migration writes 10 notes, so verify
    // lists the first 200 notes of the account when it looks for ones added by hand.
    const own = await startTestSandbox();
    const v1 = mkdtempSync(join(tmpdir(), 'ferry-report-v1-'));
    const ownEnv = (): NodeJS.ProcessEnv => ({ CRM_FERRY_BASE_URL: own.url, CRM_FERRY_TOKEN: own.token });
    try {
      copyFromCheckout(['mappings', 'samples'], v1);
      const plan = 'mappings/plans/v1-migration.yaml';
      const run = await runCli(['run', plan], { cwd: v1, env: ownEnv() });
      expect(run.code, run.stdout + run.stderr).toBe(0);
      const clean = await runCli(['verify', plan, '--report', 'clean.html'], { cwd: v1, env: ownEnv() });
      expect(clean.code, clean.stdout + clean.stderr).toBe(0);
      const kase = (await own.v2('GET', '/kases?perPage=100')).body.kases[0];
      for (let i = 0; i < 205; i++)
        expect(
          (await own.v2('POST', '/entries', { entry: { type: 'note', kase: { id: kase.id }, content: `Note ${i}` } }))
            .status,
        ).toBe(201);
      const { stdout, stderr } = await runCli(['verify', plan, '--json', '--report', 'verify.html'], {
        cwd: v1,
        env: ownEnv(),
      });
      const end = endOf(stdout);
      expect(end.summary.notListed, stderr).toEqual([{ entity: 'entry', listed: 200 }]);

      const { page, problems, requests } = await open(join(v1, 'verify.html'));
      expect(problems).toEqual([]);
      expect(requests).toEqual([]);
      const items = page.locator('#not-checked li');
      expect(await items.count()).toBe(1);
      expect(await page.locator('#not-checked li[data-not-checked="entry"]').textContent()).toBe(
        notListedText({ entity: 'entry', listed: 200 }),
      );
      expect(await page.locator('#not-checked h2').textContent()).toBe('What was not checked');
      // Seen printed too, after the differences it qualifies.
      await page.emulateMedia({ media: 'print' });
      expect(await page.locator('#not-checked').isVisible()).toBe(true);
      expect(await page.locator('section#differences ~ section#not-checked').count()).toBe(1);
      await page.close();
      // A verify whose listing was whole has no such section.
      const whole = await open(join(v1, 'clean.html'));
      expect(whole.problems).toEqual([]);
      expect(await whole.page.locator('#not-checked').count()).toBe(0);
      await whole.page.close();
    } finally {
      await own.close();
      rmSync(v1, { recursive: true, force: true });
    }
  });

  it('of rollback: the records deleted per step are the summary', async () => {
    const { code, stdout, stderr } = await runCli(['rollback', 'plan.yaml', '--report', 'rollback.html'], {
      cwd: dir,
      env: env(),
    });
    expect(code, stderr).toBe(0);
    const deleted = Object.fromEntries(
      [...stdout.matchAll(/^  (\S+)\s+(\d+) records? deleted/gm)].map((m) => [m[1], Number(m[2])]),
    );
    expect(deleted).toEqual({ people: 30, organisations: 31 });
    const { page, problems, requests } = await open(join(dir, 'rollback.html'));
    expect(problems).toEqual([]);
    expect(requests).toEqual([]);
    expect(await countOf(page, 'people', 'deleted')).toBe(30);
    expect(await countOf(page, 'organisations', 'deleted')).toBe(31);
    expect(await page.locator('svg.usage-chart polyline.requests').count()).toBe(1);
    expect(readFileSync(join(dir, 'rollback.html'), 'utf8')).not.toContain(box.token);
    await page.close();
  });
});
