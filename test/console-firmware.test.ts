import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './helpers/browser.js';
import { logIn, shows, WAIT } from './helpers/console-page.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { CHARGER_PASSWORD } from './helpers/gateway.js';
import { createOperator } from './helpers/operator.js';
import { rawCharger, type RawClient } from './helpers/raw-charger.js';
import { makeSigner } from './helpers/transfers.js';
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

describe('signed firmware, cancelling a job and deleting a file in a browser', () => {
  let raw: RawClient;
  beforeAll(async () => {
    // A 1.6 charger that takes the update and then says nothing: its job stays open.
    raw = await rawCharger(t.gw.ocppUrl, 'CP-OFF', CHARGER_PASSWORD, ['ocpp1.6']);
    await raw.call('BootNotification', { chargePointVendor: 'Raw', chargePointModel: 'R1' });
  });
  afterAll(async () => raw?.close({ code: 1000 }));

  it('uploads a signed file, refuses to delete it while its job runs, cancels the job, deletes it', async () => {
    const signer = makeSigner('ec');
    const image = Buffer.alloc(4000, 4);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await logIn(context, t.gw.operatorUrl, 'otto', operator);
    await page.goto(`${t.gw.operatorUrl}/console/firmware`);
    await page.getByRole('heading', { name: 'Firmware and logs' }).waitFor(WAIT);

    await page.getByLabel('Upload a firmware file').setInputFiles({
      name: 'signed-1.0.bin',
      mimeType: 'application/octet-stream',
      buffer: image,
    });
    await page.getByLabel('Signing certificate (PEM, signed firmware)').setInputFiles({
      name: 'signer.pem',
      mimeType: 'application/x-pem-file',
      buffer: Buffer.from(signer.certificate),
    });
    await page.getByLabel('Signature (signed firmware)').setInputFiles({
      name: 'signed-1.0.sig',
      mimeType: 'application/octet-stream',
      buffer: Buffer.from(signer.sign(image), 'base64'),
    });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByRole('button', { name: 'Yes, upload' }).click();
    await shows(page.getByRole('status'), 'signed-1.0.bin stored, 3.9 kB, signed.');
    await page.getByRole('button', { name: 'Close' }).click();
    const fileRow = page.getByRole('row', { name: /signed-1\.0\.bin/ });
    await shows(fileRow, 'signed');

    await page.getByRole('combobox', { name: 'Charger', exact: true }).selectOption('CP-OFF');
    await page.getByRole('combobox', { name: 'Firmware', exact: true }).selectOption({
      label: 'signed-1.0.bin',
    });
    await page.getByRole('button', { name: 'Update firmware' }).click();
    await page.getByRole('button', { name: 'Yes, update firmware' }).click();
    await shows(page.getByRole('status'), /Job \d+: the charger answered Accepted/);
    await page.getByRole('button', { name: 'Close' }).click();

    await fileRow.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await shows(page.getByRole('status'), 'is used by an unfinished job');
    await page.getByRole('button', { name: 'Close' }).click();

    const jobs = page.getByRole('table', { name: 'Jobs' });
    const jobRow = jobs.getByRole('row', { name: /CP-OFF/ }).first();
    await jobRow.getByRole('button').first().click();
    await page.getByRole('button', { name: 'Cancel job' }).click();
    await page.getByRole('button', { name: 'Yes, cancel job' }).click();
    await shows(page.getByRole('status'), /Job \d+: Cancelled\./);
    await page.getByRole('button', { name: 'Close' }).click();
    await shows(jobRow, 'Cancelled');
    await shows(page.locator('.history'), 'Cancelled');
    expect(await page.getByRole('button', { name: 'Cancel job' }).count()).toBe(0);

    await fileRow.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await shows(page.getByRole('status'), 'signed-1.0.bin deleted.');
    await page.getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => page.getByRole('row', { name: /signed-1\.0\.bin/ }).count()).toBe(0);

    const viewerContext = await browser.newContext();
    const viewerPage = await logIn(viewerContext, t.gw.operatorUrl, 'vera', viewer);
    await viewerPage.goto(`${t.gw.operatorUrl}/console/firmware`);
    const viewerJobs = viewerPage.getByRole('table', { name: 'Jobs' });
    await shows(viewerJobs, 'Cancelled');
    expect(await viewerPage.getByRole('button', { name: 'Delete' }).count()).toBe(0);
    await viewerJobs
      .getByRole('row', { name: /CP-OFF/ })
      .first()
      .getByRole('button')
      .first()
      .click();
    await shows(viewerPage.locator('.history'), 'Cancelled');
    await viewerContext.close();
    await context.close();
  }, 60_000);
});
