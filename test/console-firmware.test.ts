import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './helpers/browser.js';
import { logIn, shows, WAIT } from './helpers/console-page.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { createOperator } from './helpers/operator.js';
import { bootedCharger, ocpp16, type SimulatedChargePoint } from './helpers/simulated-charger.js';

// The console's Firmware view in headless Debian Chromium against a real gateway and a simulated
// 1.6 charger: upload, update, the job's statuses, a log requested and listed.

let t: TestGateway;
let browser: Browser;
let cp: SimulatedChargePoint;
let operator: string;
let viewer: string;

beforeAll(async () => {
  t = await startTestGateway();
  operator = createOperator(t.gw.db, 'otto', 'operator');
  viewer = createOperator(t.gw.db, 'vera', 'viewer');
  cp = await bootedCharger(ocpp16, t.gw, 'CP-1');
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await cp?.disconnect();
  await t?.close();
});

describe('the Firmware view in a browser', () => {
  it('uploads firmware, updates a charger, shows every status, requests and lists a log', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await logIn(context, t.gw.operatorUrl, 'otto', operator);
    await page.getByRole('link', { name: 'Firmware' }).click();
    await page.getByRole('heading', { name: 'Firmware and logs' }).waitFor(WAIT);

    await page.getByLabel('Upload a firmware file').setInputFiles({
      name: 'wallbox-4.2.bin',
      mimeType: 'application/octet-stream',
      buffer: Buffer.alloc(3000, 9),
    });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByRole('button', { name: 'Yes, upload' }).click();
    await shows(page.getByRole('status'), 'wallbox-4.2.bin stored, 2.9 kB.');
    await page.getByRole('button', { name: 'Close' }).click();
    await shows(page.locator('table'), 'wallbox-4.2.bin');

    await page.getByRole('combobox', { name: 'Charger', exact: true }).selectOption('CP-1');
    await page.getByRole('button', { name: 'Update firmware' }).click();
    await page.getByRole('button', { name: 'Yes, update firmware' }).click();
    await shows(page.getByRole('status'), /Job \d+: the charger answered Accepted/);
    await page.getByRole('button', { name: 'Close' }).click();
    const jobs = page.getByRole('table', { name: 'Jobs' });
    await shows(jobs, 'Installed');
    await jobs.getByRole('button').first().click();
    const history = page.locator('.history');
    for (const status of ['Downloading', 'Downloaded', 'Installing', 'Installed']) {
      await shows(history, status);
    }

    await page.getByRole('button', { name: 'Request log' }).click();
    await page.getByRole('button', { name: 'Yes, request log' }).click();
    await page.getByRole('button', { name: 'Close' }).click();
    await shows(jobs, 'Uploaded');
    const link = page.getByRole('link', { name: 'CP-1-diagnostics.log' });
    await link.waitFor(WAIT);
    const download = await page.request.get(
      `${t.gw.operatorUrl}${await link.getAttribute('href')}`,
    );
    expect(await download.text()).toContain('CP-1 diagnostics');

    const viewerContext = await browser.newContext();
    const viewerPage = await logIn(viewerContext, t.gw.operatorUrl, 'vera', viewer);
    await viewerPage.goto(`${t.gw.operatorUrl}/console/firmware`);
    await shows(viewerPage.getByRole('table', { name: 'Jobs' }), 'Installed');
    expect(await viewerPage.getByRole('button', { name: 'Update firmware' }).count()).toBe(0);
    await viewerContext.close();
    await context.close();
  }, 60_000);
});
