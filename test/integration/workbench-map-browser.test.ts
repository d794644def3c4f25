import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';
import {
  axeViolations,
  type BrowserBench,
  chosen,
  openBrowserBench,
  select,
  yamlShows,
} from '../helpers/workbench-browser.ts';

/**
 * The Map view's table in Debian's chromium, by role and visible label: a link to another step
 * and the name beside it, an item's type, an address part's shared type, a custom field of the
 * account, what records are found by, the YAML edited by hand. After each change the YAML and the
 * first rows follow, each rejected or warned cell with its reason. One browser for the file; every
 * wait is on what the page shows.
 */
const dir = mkdtempSync(join(tmpdir(), 'ferry-wb-map-'));
let box: TestSandbox;
let open: BrowserBench;
let page: Page;

beforeAll(async () => {
  box = await startTestSandbox();
  // A plan with a step of companies; the people link to them by id, one to a company the file lacks.
  writeFileSync(join(dir, 'companies.csv'), 'cid,name\nc1,Acme\nc2,Fjord\n');
  writeFileSync(
    join(dir, 'companies.yaml'),
    'version: 1\nentity: party\nkey: "{{cid}}"\nfields:\n  - to: name\n    value: {column: name}\n',
  );
  writeFileSync(
    join(dir, 'plan.yaml'),
    'version: 1\nsteps:\n  - {name: companies, mapping: companies.yaml, input: companies.csv}\n',
  );
  writeFileSync(
    join(dir, 'people.csv'),
    [
      'id,first,last,email,mobile,street,city,company id,company,since,labels,linkedin',
      'p1,Ann,Lee,ann@example.com,+49 30 1234567,1 High St,Oslo,c1,Acme,15.01.2023,a;b,ann-lee',
      'p2,Bo,Ek,bo@example.com,+47 22 33 44 55,2 Low Rd,Bergen,c9,Nowhere Ltd,03.02.2023,b,',
      'p3,Cy,Ro,cy@example.com,,,,c2,Fjord,20.02.2023,,',
      // Ann again, under the same id: a duplicate key until the rows are merged.
      'p1,Ann,Lee-Berg,ann@example.com,,,,c1,Acme,15.01.2023,c,',
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

/** A cell of the first rows: the row as a spreadsheet numbers it, and the column. */
function cell(row: number, column: string) {
  return page.locator(`tr[data-row="${row}"] td[data-column="${column}"]`);
}

describe('the Map view in headless Chromium', () => {
  it('edits links, items and their types, address parts, custom fields and match in the table, the YAML and first rows following', async () => {
    await page.goto(open.bench.url);
    await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'Map people.csv' }).click();
    await page.getByRole('heading', { name: 'Map people.csv' }).waitFor();
    // The draft's suggestions: the company by name, the mobile a phone of its type, the address in parts.
    expect(await chosen(page, 'Target of company')).toBe('organisation by name (or id)');
    expect(await chosen(page, 'Target of company id')).toBe('(not imported)');
    expect(await chosen(page, 'Target of mobile')).toBe('phone number');
    expect(await chosen(page, 'Type of mobile')).toBe('Mobile');
    expect(await chosen(page, 'Target of city')).toBe('address: city');
    expect(await chosen(page, 'Service of linkedin')).toBe('LINKED_IN');
    await page
      .getByText("One address entry with street: its type, Required and A bad value are the whole entry's.")
      .waitFor();
    // The account has no custom field of the dates' name: the draft leaves the column out, and says which to create.
    expect(await chosen(page, 'Target of since')).toBe('(not imported)');
    await yamlShows(page, 'create a custom field \\"since\\" (Date)');

    // The company's id links to the step of companies, by keyboard (type-ahead on the list): the
    // name stays beside it, written when the id finds no company.
    await select(page, 'Target of company id').focus();
    await page.keyboard.type('organisation: link');
    await yamlShows(page, 'key: "{{company id}}"');
    expect(await chosen(page, 'Target of company id')).toBe('organisation: link to a row of step companies');
    await yamlShows(page, 'ref: companies');
    await cell(3, 'record').filter({ hasText: 'organisation Nowhere Ltd' }).waitFor();
    expect(await cell(2, 'record').textContent()).toContain("organisation: the row 'c1' of step companies");
    // Without the name, the row whose company is missing is warned about on the id's cell.
    await select(page, 'Target of company').focus();
    await page.keyboard.press('Home');
    await yamlShows(page, 'value: {column: "company"', false);
    await cell(3, 'company id')
      .filter({
        hasText:
          'Warning: company id "c9": no row with this key in step companies; the record is written without organisation',
      })
      .waitFor();
    expect(await cell(3, 'company id').getAttribute('class')).toBe('cell-warning');
    // Required: the link must be made, or the row is rejected.
    await page.getByRole('checkbox', { name: 'company id required' }).press('Space');
    await cell(3, 'company id')
      .filter({ hasText: 'Rejected: company id "c9": no row with this key in step companies' })
      .waitFor();

    // An item's type, by keyboard: the mobile number becomes a home number, in the YAML and the row.
    await select(page, 'Type of mobile').focus();
    await page.keyboard.press('ArrowUp');
    await yamlShows(page, 'type: Home');
    await cell(2, 'record').filter({ hasText: '+49301234567 (Home)' }).waitFor();
    // An address part's type is the whole address's.
    await select(page, 'Type of city').selectOption({ label: 'Postal' });
    await yamlShows(page, 'type: Postal');
    await cell(2, 'record').filter({ hasText: '1 High St, Oslo (Postal)' }).waitFor();
    // The account's custom field chosen, its dates read as the file writes them: the rows'
    // rejects are the missing company's and the repeated key's.
    await select(page, 'Target of since').selectOption({ label: 'custom field: Customer since' });
    await yamlShows(page, 'definition: Customer since');
    await select(page, 'Add a transform to since').selectOption('date');
    await yamlShows(page, 'value: {column: since, transform: [date]}');
    await page.getByRole('textbox', { name: 'Options of transform 1 of since' }).fill('dd.MM.yyyy');
    await page.getByRole('textbox', { name: 'Options of transform 1 of since' }).press('Tab');
    await yamlShows(page, 'dd.MM.yyyy');
    await page.getByText('4 rows: 2 rejected, 0 with a warning.').waitFor();
    expect(await cell(2, 'since').textContent()).toBe('15.01.2023');
    await cell(5, 'id').filter({ hasText: "Rejected: Duplicate key 'p1'" }).waitFor();
    // What records of the account are found by.
    await page
      .getByRole('combobox', { name: 'Find records the account has by' })
      .selectOption({ label: 'the e-mail address' });
    await yamlShows(page, 'match: {by: email, onMatch: update}');
    // Rows with one key merged: the later row is folded into the first, a warning on its key.
    await page
      .getByRole('combobox', { name: 'Rows with the same key' })
      .selectOption({ label: 'merge them into the first' });
    await yamlShows(page, 'onDuplicate: merge');
    await cell(5, 'id')
      .filter({ hasText: "Warning: the same record as the row with key 'p1': folded into it" })
      .waitFor();
    expect(await page.locator('tr[data-row="5"] td').first().textContent()).toBe('skipped');
    // The first row says what it took in: the later row's tag.
    expect(await cell(2, 'id').textContent()).toContain('Warning: Row 5 has the same key and was merged in: 1 tags');
    await page.getByText('4 rows: 1 rejected, 2 with a warning.').waitFor();

    // A transform's options: the month read first rejects the dates whose "month" is over 12, the
    // reason on the cell; a bad value left out lets the row through, warned about on the same cell.
    const since = page.getByRole('textbox', { name: 'Options of transform 1 of since' });
    expect(await since.inputValue()).toBe('dd.MM.yyyy');
    await since.fill('MM.dd.yyyy');
    await since.press('Tab');
    await yamlShows(page, 'transform: [{date: MM.dd.yyyy}]');
    await cell(2, 'since')
      .filter({ hasText: '15.01.2023Rejected: since "15.01.2023" is not a date (MM.dd.yyyy)' })
      .waitFor();
    expect(await cell(3, 'since').getAttribute('class')).toBeNull();
    await select(page, 'A bad value in since').selectOption({ label: 'leave the value out' });
    await yamlShows(page, 'onInvalid: drop');
    await cell(2, 'since')
      .filter({ hasText: '15.01.2023Warning: since "15.01.2023" is not a date (MM.dd.yyyy): left out of the record' })
      .waitFor();
    expect(await cell(2, 'since').getAttribute('class')).toBe('cell-warning');
    expect(await cell(2, 'record').textContent()).not.toContain('Customer since');
    await since.fill('dd.MM.yyyy');
    await since.press('Tab');
    await yamlShows(page, 'transform: [{date: dd.MM.yyyy}]');
    await page.getByText('4 rows: 1 rejected, 2 with a warning.').waitFor();
    expect(await cell(2, 'since').textContent()).toBe('15.01.2023');
    // Another transform from the list, after the draft's trim (kept); a website's service.
    await select(page, 'Add a transform to first').selectOption({ label: 'uppercase' });
    await yamlShows(page, 'column: "first", transform: [trim, uppercase]');
    await cell(2, 'record').filter({ hasText: 'firstName ANN;' }).waitFor();
    await select(page, 'Service of linkedin').selectOption({ label: 'XING' });
    await yamlShows(page, 'service: XING');
    await cell(2, 'record').filter({ hasText: 'ann-lee (XING)' }).waitFor();

    // The YAML edited by hand: the table follows; a problem is shown with its line, and nothing is saved.
    const yaml = page.getByRole('textbox', { name: 'Mapping YAML' });
    const text = await yaml.inputValue();
    await yaml.fill(text.replace('type: Home', 'type: Fax'));
    await page.waitForFunction(
      () =>
        (globalThis as any).document.querySelector('select[aria-label="Type of mobile"]').selectedOptions[0]
          ?.textContent === 'Fax',
    );
    await yaml.fill(text.replace('to: lastName', 'to: lastNome'));
    await page.getByText(/^Line 9: .*lastNome/).waitFor();
    expect(await page.getByRole('button', { name: 'Save mapping' }).isDisabled()).toBe(true);
    await yaml.fill(text);
    await page.getByText('The mapping loads.').waitFor();

    expect(await axeViolations(page)).toEqual([]);

    // Two changes to the table and Save, each before the answer to the one before: none is lost.
    await select(page, 'Type of mobile').selectOption({ label: 'Work' });
    await page.getByRole('checkbox', { name: 'first required' }).click();
    await page.getByRole('button', { name: 'Save mapping' }).click();
    await page.getByText('Saved people.mapping.yaml; plan.yaml reads people.csv in step people.').waitFor();
    const saved = readFileSync(join(dir, 'people.mapping.yaml'), 'utf8');
    const entries = (parseYaml(saved) as { fields: Array<Record<string, any>> }).fields;
    expect(entries.find((entry) => entry.value?.column === 'mobile')?.type).toBe('Work');
    expect(entries.find((entry) => entry.value?.column === 'first')?.required).toBe(true);
    expect(saved).toMatch(/- to: organisation\n\s+ref: companies\n\s+key: "\{\{company id\}\}"\n\s+required: true/);
    expect(saved).toContain('type: Postal');
    expect(saved).toContain('onDuplicate: merge');
    expect(saved).toContain('service: XING');
    expect(saved).toContain('# docs/mapping.md lists every target and transform.');
    expect(open.seen.problems).toEqual([]);
    expect(open.seen.elsewhere).toEqual([]);
  }, 180_000);
});
