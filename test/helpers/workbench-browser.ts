/**
 * The workbench's page in Debian's chromium, for the browser tests: one browser per test file, the
 * pages it opens watched for console errors, failed requests and requests to anywhere but the
 * workbench, axe-core's serious and critical violations, and the Map view's controls by their
 * visible labels. Every wait is on what the page shows, never on the clock.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { TestSandbox } from './sandbox.ts';
import { startTestWorkbench, type TestWorkbench } from './workbench.ts';

const CHROMIUM = '/usr/bin/chromium';
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Starts Debian's chromium, headless, at 1280 px wide, with a profile of its own. */
export async function launchChromium(): Promise<BrowserContext> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium), as .ci/run does`);
  return chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'ferry-chromium-')), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** What the watched pages did wrong: console errors and warnings, failed requests, and requests elsewhere. */
export class PageWatch {
  readonly problems: string[] = [];
  readonly elsewhere: string[] = [];

  /** `origin`: the workbench's own (`http://127.0.0.1:PORT`); a request to any other is noted. */
  constructor(private readonly origin: () => string) {}

  /** Listens to a page, and gives it back. */
  watch(target: Page): Page {
    target.setDefaultTimeout(30_000);
    target.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') this.problems.push(message.text());
    });
    target.on('pageerror', (error) => this.problems.push(error.message));
    target.on('requestfailed', (request) => {
      // An events stream closed by leaving the view is no failure of the page.
      if (!request.url().includes('/api/events')) this.problems.push(`failed: ${request.url()}`);
    });
    target.on('request', (request) => {
      if (!request.url().startsWith(`${this.origin()}/`)) this.elsewhere.push(request.url());
    });
    return target;
  }
}

/** A workbench over `dir` and a browser on it, its first page watched. */
export interface BrowserBench {
  bench: TestWorkbench;
  browser: BrowserContext;
  page: Page;
  seen: PageWatch;
  /** Closes the browser, then the workbench. */
  stop(): Promise<void>;
}

/** Starts a workbench over `dir` against `box`, and chromium with one page, watched. */
export async function openBrowserBench(box: TestSandbox, dir: string): Promise<BrowserBench> {
  const bench = await startTestWorkbench(box, dir);
  const seen = new PageWatch(() => bench.origin);
  const browser = await launchChromium().catch(async (error: unknown) => {
    await bench.stop();
    throw error;
  });
  const page = seen.watch(browser.pages()[0] ?? (await browser.newPage()));
  return {
    bench,
    browser,
    page,
    seen,
    stop: async () => {
      await browser.close();
      await bench.stop();
    },
  };
}

/** axe-core's serious and critical violations in a page, with where. */
export async function axeViolations(target: Page): Promise<string[]> {
  await target.evaluate(AXE);
  const found = (await target.evaluate(async () => {
    const result = await (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ['violations'] });
    return result.violations.map((v: any) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n: any) => n.target.join(' ')).slice(0, 3) }));
  })) as Array<{ id: string; impact: string; nodes: string[] }>;
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} at ${v.nodes.join(', ')}`);
}

/** A list of the Map view by its label (`Target of email`). */
export function select(page: Page, name: string) {
  return page.getByRole('combobox', { name, exact: true });
}

/** The label of a list's chosen option, as a person reads it. */
export function chosen(page: Page, name: string): Promise<string> {
  return select(page, name).evaluate((element: any) => element.selectedOptions[0]?.textContent ?? '');
}

/** Waits until the YAML beside the Map view's table holds (or no longer holds) `text`. */
export async function yamlShows(page: Page, text: string, holds = true): Promise<void> {
  // Until the Map view has its YAML (the file read, the mapping drafted), neither holds.
  await page.waitForFunction(([wanted, yes]) => ((globalThis as any).document.querySelector('#yaml-text')?.value.includes(wanted) as boolean | undefined) === yes, [text, holds] as const);
}
