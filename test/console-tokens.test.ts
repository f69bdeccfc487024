import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdTokenStore } from '../src/id-tokens/id-token-store.js';
import { launchChromium } from './helpers/browser.js';
import { logIn, shows, WAIT } from './helpers/console-page.js';
import { DRIVERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { createOperator } from './helpers/operator.js';

// A driver's page in Debian's Chromium against a real gateway: an operator binds a card (the
// value shown once), blocks, unblocks and unbinds it; a viewer sees the list masked, nothing to act.

let t: TestGateway;
let browser: Browser;
let operator: string;
let viewer: string;

beforeAll(async () => {
  t = await startTestGateway();
  operator = createOperator(t.gw.db, 'otto', 'operator');
  viewer = createOperator(t.gw.db, 'vera', 'viewer');
  browser = await launchChromium();
  // A vehicle the fleet's cloud bound, to show its source.
  t.gw.db.transaction(() =>
    new IdTokenStore(t.gw.db).bind(
      {
        driverId: DRIVERS.ada.id,
        kind: 'vehicle',
        type: 'MacAddress',
        value: '00:23:A7:F1:C2:D4',
        label: 'Ioniq 5',
        source: 'cloud',
      },
      new Date().toISOString(),
    ),
  )();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const driverPage = `/console/money/drivers/${DRIVERS.ada.id}`;

describe("a driver's cards and vehicles in a browser", () => {
  it('an operator binds a card, sees its value once, then blocks, unblocks and unbinds it', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await logIn(context, t.gw.operatorUrl, 'otto', operator);
    await page.goto(`${t.gw.operatorUrl}${driverPage}`);
    const table = page.locator('[data-table="tokens"]');
    await shows(table, /vehicle\s*MacAddress\s*•+C2D4\s*Ioniq 5\s*active\s*fleet cloud/);

    const form = page.getByRole('form', { name: 'Bind a card or vehicle' });
    await form.getByLabel('Card UID').fill('04:a2:3b:1c');
    await form.getByLabel('Label (optional)').fill('blue fob');
    await form.getByLabel('Valid through (optional, last day at the site)').fill('2099-12-31');
    await form.getByRole('button', { name: 'Bind' }).click();
    await shows(
      form.getByRole('status'),
      'Bound card •••3B1C (read as 04:a2:3b:1c; shown only now).',
    );
    const row = table.locator('tbody tr', { hasText: '•••3B1C' });
    await shows(
      row,
      /card\s*ISO14443\s*•••3B1C\s*blue fob\s*active\s*site operator\s*01 Jan 2100, 00:00/,
    );
    await expect.poll(() => page.locator('main').innerText(), WAIT).not.toMatch(/4A23B1C/i);

    // Bound to another driver already: the page says so and binds nothing.
    await page.goto(`${t.gw.operatorUrl}/console/money/drivers/${DRIVERS.bola.id}`);
    const other = page.getByRole('form', { name: 'Bind a card or vehicle' });
    await other.getByLabel('Card UID').fill('04A23B1C');
    await other.getByRole('button', { name: 'Bind' }).click();
    await shows(other.getByRole('status'), /bound to driver drv-ada/);
    await shows(page.locator('[data-field="no-tokens"]'), 'No card or vehicle is bound');

    await page.goto(`${t.gw.operatorUrl}${driverPage}`);
    await row.getByRole('button', { name: 'Block •••3B1C' }).click();
    await row.getByRole('dialog').getByRole('button', { name: 'Yes, block •••3B1C' }).click();
    await shows(row.getByRole('dialog').getByRole('status'), '•••3B1C is blocked.');
    await row.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
    await shows(row.locator('[data-field="state"]'), /blocked\s*blocked by the site operator/);

    await row.getByRole('button', { name: 'Unblock •••3B1C' }).click();
    await row.getByRole('dialog').getByRole('button', { name: 'Yes, unblock •••3B1C' }).click();
    await row.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
    await shows(row.locator('[data-field="state"]'), 'active');

    await row.getByRole('button', { name: 'Unbind •••3B1C' }).click();
    await row.getByRole('dialog').getByRole('button', { name: 'Yes, unbind •••3B1C' }).click();
    await row.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => row.count(), WAIT).toBe(0);

    const actions = t.gw.db
      .prepare("SELECT action, status FROM operator_audit WHERE action LIKE 'token.%' ORDER BY seq")
      .all();
    expect(actions).toEqual([
      { action: 'token.bind', status: 200 },
      { action: 'token.bind', status: 409 },
      { action: 'token.block', status: 200 },
      { action: 'token.unblock', status: 200 },
      { action: 'token.unbind', status: 200 },
    ]);
    await context.close();
  }, 60_000);

  it('a viewer sees the list masked with nothing to act on', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await logIn(context, t.gw.operatorUrl, 'vera', viewer);
    await page.goto(`${t.gw.operatorUrl}${driverPage}`);
    await shows(page.locator('[data-table="tokens"]'), /•+C2D4/);
    expect(await page.getByRole('form', { name: 'Bind a card or vehicle' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^(Block|Unbind) / }).count()).toBe(0);
    await context.close();
  }, 60_000);
});
