import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './helpers/browser.js';
import { logIn, shows, WAIT } from './helpers/console-page.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { createOperator } from './helpers/operator.js';

// The console's Tariffs page in Debian's Chromium against a real gateway whose tariffs are kept
// in its database: a viewer reads them, an operator edits one through the page.

let t: TestGateway;
let browser: Browser;
let operator: string;
let viewer: string;

beforeAll(async () => {
  t = await startTestGateway({ pricing: { tariffSource: 'database' } });
  operator = createOperator(t.gw.db, 'otto', 'operator');
  viewer = createOperator(t.gw.db, 'vera', 'viewer');
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('the Tariffs page in a browser', () => {
  it('a viewer reads each tariff’s price now and its connectors, with nothing to edit', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await logIn(context, t.gw.operatorUrl, 'vera', viewer);
    await page.getByRole('link', { name: 'Tariffs' }).click();
    const dc = page.locator('[data-tariff="dc"]');
    await shows(dc.locator('[data-field="now"]'), '₦412.5/kWh');
    await shows(dc.locator('[data-field="connectors"]'), 'CP-1/1, CP-1/2');
    await shows(dc.locator('[data-field="until"]'), 'Base price, all the time');
    expect(await page.getByRole('button', { name: /^Edit / }).count()).toBe(0);
    await context.close();
  });

  it('an operator adds an evening window to a tariff, and is told when windows overlap', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await logIn(context, t.gw.operatorUrl, 'otto', operator);
    await page.goto(`${t.gw.operatorUrl}/console/tariffs`);
    await page.getByRole('button', { name: 'Edit dc' }).click();
    const form = page.getByRole('form', { name: 'Edit tariff dc' });
    await form.getByRole('button', { name: 'Add window' }).click();
    await form.getByRole('group', { name: 'Window 1' }).getByLabel('Price (NGN/kWh)').fill('480');
    // A second window over the first one's hours: the gateway refuses, the page says why.
    await form.getByRole('button', { name: 'Add window' }).click();
    const second = form.getByRole('group', { name: 'Window 2' });
    await second.getByLabel('From').fill('21:00');
    await second.getByLabel('To').fill('23:00');
    await second.getByLabel('Price (NGN/kWh)').fill('500');
    await form.getByRole('button', { name: 'Save tariff' }).click();
    const dialog = form.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Yes, save tariff' }).click();
    await shows(dialog.locator('.error'), /overlaps/);
    await dialog.getByRole('button', { name: 'Close' }).click();

    await second.getByRole('button', { name: 'Remove window 2' }).click();
    await form.getByRole('button', { name: 'Save tariff' }).click();
    await dialog.getByRole('button', { name: 'Yes, save tariff' }).click();
    await shows(dialog.locator('.reply'), 'Tariff dc is now version 2');
    await dialog.getByRole('button', { name: 'Close' }).click();
    await form.getByRole('button', { name: 'Close' }).click();

    const row = page.locator('[data-tariff="dc"] table.windows tbody tr');
    await shows(row, /Mon, Tue, Wed, Thu, Fri\s*18:00 – 22:00\s*₦480\/kWh/);
    expect(
      t.gw.db
        .prepare(
          "SELECT version, set_by, spec FROM tariff_versions WHERE tariff_id = 'dc' AND version = 2",
        )
        .get(),
    ).toMatchObject({ set_by: 'otto' });
    expect(
      t.gw.db
        .prepare("SELECT status FROM operator_audit WHERE action = 'tariff.put' ORDER BY seq")
        .all(),
    ).toEqual([{ status: 400 }, { status: 200 }]);
    await context.close();
  }, 60_000);

  it('an operator creates a tariff and deletes it again', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await logIn(context, t.gw.operatorUrl, 'otto', operator);
    await page.goto(`${t.gw.operatorUrl}/console/tariffs`);
    await page.getByRole('button', { name: 'New tariff' }).click();
    const form = page.getByRole('form', { name: 'New tariff' });
    await form.getByLabel('Name').fill('night');
    await form.getByLabel('Base price (NGN/kWh)').fill('199.999');
    await form.getByRole('button', { name: 'Save tariff' }).click();
    await form.getByRole('dialog').getByRole('button', { name: 'Yes, save tariff' }).click();
    await shows(page.locator('[data-tariff="night"] [data-field="now"]'), '₦199.999/kWh');
    await form.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
    await form.getByRole('button', { name: 'Close' }).click();

    const night = page.locator('[data-tariff="night"]');
    await night.getByRole('button', { name: 'Delete night' }).click();
    await night.getByRole('dialog').getByRole('button', { name: 'Yes, delete night' }).click();
    await expect.poll(() => night.count(), WAIT).toBe(0);
    await context.close();
  }, 60_000);
});
