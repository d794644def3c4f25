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
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium), as .ci/run does`);
  return chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'ferry-chromium-')), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
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
    return result.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      nodes: v.nodes.map((n: any) => n.target.join(' ')).slice(0, 3),
    }));
  })) as Array<{ id: string; impact: string; nodes: string[] }>;
  return found
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} at ${v.nodes.join(', ')}`);
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
  await page.waitForFunction(
    ([wanted, yes]) =>
      ((globalThis as any).document.querySelector('#yaml-text')?.value.includes(wanted) as boolean | undefined) === yes,
    [text, holds] as const,
  );
}

/**
 * What spills out of the window or overlaps at the window's present size: elements wider than
 * the window (but those inside the tables' own scroll areas), and pairs of text boxes that cover
 * each other (each clipped to the scroll areas it is in).
 */
export async function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const doc = (globalThis as any).document;
    const width = (globalThis as any).innerWidth as number;
    const problems: string[] = [];
    const describe = (el: any): string =>
      `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.className && typeof el.className === 'string' ? `.${el.className.split(' ').join('.')}` : ''} "${(el.textContent ?? '').trim().slice(0, 40)}"`;
    if (doc.documentElement.scrollWidth > width)
      problems.push(`the page is ${doc.documentElement.scrollWidth} px wide in a ${width} px window`);
    for (const el of doc.querySelectorAll('body *')) {
      if (el.closest('.scroll') && !el.classList.contains('scroll')) continue;
      if (el.closest('dialog:not([open])')) continue;
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) continue;
      if (box.right > width + 0.5) problems.push(`${describe(el)} reaches ${Math.round(box.right)} px`);
    }
    // Text boxes, each clipped to the scroll areas around it.
    const boxes: Array<{ el: any; l: number; t: number; r: number; b: number }> = [];
    const walker = doc.createTreeWalker(doc.body, 4);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.textContent.trim()) continue;
      const el = node.parentElement;
      if (!el || el.closest('dialog:not([open])') || el.closest('option') || el.closest('textarea')) continue;
      const range = doc.createRange();
      range.selectNodeContents(node);
      for (const rect of range.getClientRects()) {
        let l = rect.left;
        let t = rect.top;
        let r = rect.right;
        let b = rect.bottom;
        for (let area = el.closest('.scroll'); area; area = area.parentElement?.closest('.scroll')) {
          const clip = area.getBoundingClientRect();
          l = Math.max(l, clip.left);
          t = Math.max(t, clip.top);
          r = Math.min(r, clip.right);
          b = Math.min(b, clip.bottom);
        }
        if (r - l > 1 && b - t > 1) boxes.push({ el, l, t, r, b });
      }
    }
    for (let i = 0; i < boxes.length; i += 1) {
      for (let j = i + 1; j < boxes.length; j += 1) {
        const a = boxes[i] as (typeof boxes)[number];
        const c = boxes[j] as (typeof boxes)[number];
        if (a.el === c.el) continue;
        const across = Math.min(a.r, c.r) - Math.max(a.l, c.l);
        const down = Math.min(a.b, c.b) - Math.max(a.t, c.t);
        // A sticky header drawn over a row is the one overlap meant; none is scrolled here.
        if (across > 2 && down > 2) problems.push(`${describe(a.el)} overlaps ${describe(c.el)}`);
      }
    }
    return problems.slice(0, 20);
  });
}

/** The layout at 1280 px and at a laptop's 1366 x 768, then back to the test's window. */
export async function laidOut(page: Page, view: string): Promise<string[]> {
  const found: string[] = [];
  for (const size of [
    { width: 1280, height: 800 },
    { width: 1366, height: 768 },
  ]) {
    await page.setViewportSize(size);
    for (const problem of await layoutProblems(page)) found.push(`${view} at ${size.width} px: ${problem}`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  return found;
}
