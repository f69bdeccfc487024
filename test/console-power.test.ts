import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './helpers/browser.js';
import { logIn as logInAt, shows, WAIT } from './helpers/console-page.js';
import {
  API_KEY,
  DRIVERS,
  PASSWORD_HASH,
  startTestGateway,
  type TestGateway,
} from './helpers/gateway.js';
import { mintToken, startSession } from './helpers/http.js';
import { createOperator } from './helpers/operator.js';
import {
  bootedCharger,
  IONIQ,
  ocpp201,
  type SimulatedChargePoint,
} from './helpers/simulated-charger.js';

// The console's site power panel in a real browser against a real gateway under load management
// (a `power` key: a 30 kW site with a 25 kW circuit) and a real simulated charger drawing power.

let t: TestGateway;
let browser: Browser;
let cp: SimulatedChargePoint;
let operator: string;
let viewer: string;
const logIn = (context: BrowserContext, name: string, credential: string) =>
  logInAt(context, t.gw.operatorUrl, name, credential);

beforeAll(async () => {
  t = await startTestGateway({
    // Real time (the load manager's rule for simulators), a meter sample every second.
    ocpp: {
      meterSampleIntervalSeconds: 1,
      callTimeoutSeconds: 2,
      authFailureDelay: { initialMilliseconds: 5, maxMilliseconds: 40 },
    },
    chargers: [
      {
        id: 'CP-1',
        passwordHash: PASSWORD_HASH,
        connectors: ['1', '2'].map((id) => ({
          id,
          tariff: 'dc',
          type: 'DC' as const,
          maxPowerKw: 22,
        })),
      },
    ],
    power: {
      limitKw: 30,
      circuits: [{ id: 'dc-bank', limitKw: 25, connectors: ['CP-1/1', 'CP-1/2'] }],
    },
  });
  operator = createOperator(t.gw.db, 'otto', 'operator');
  viewer = createOperator(t.gw.db, 'vera', 'viewer');
  // 22 kW at real time: the 5000 NGN session (12 kWh) runs for half an hour, well past the test.
  cp = await bootedCharger(ocpp201, t.gw, 'CP-1', { maxPowerW: 22_000, timeFactor: 1 });
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await cp?.disconnect();
  await t?.close();
});

describe('the site power panel in a browser', () => {
  it('shows limits, the session’s allocation and measured power; an operator lowers and clears a limit', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await logIn(context, 'otto', operator);
    const site = page.locator('[data-node="site"]');
    const bank = page.locator('[data-node="dc-bank"]');
    await shows(site.locator('[data-field="limit"]'), '30 kW');
    await shows(site.locator('[data-field="source"]'), 'Contracted limit');
    await shows(bank.locator('[data-field="limit"]'), '25 kW');

    await cp.plugIn(1, IONIQ);
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const started = await startSession(
      t.gw.url,
      token,
      { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email },
      5000,
    );
    expect(started.status).toBe(200);
    // The connector's maximum is the least of its 22 kW, the circuit's 25 and the site's 30.
    const allocation = page.locator(
      '[data-charger="CP-1"] [data-connector="1"] [data-field="allocation"]',
    );
    await shows(allocation, /^\s*22 kW\s*$/);
    await shows(site.locator('[data-field="allocated"]'), '22 kW');
    await expect
      .poll(() => site.locator('[data-field="measured"]').textContent(), WAIT)
      .toMatch(/Measured [1-9][\d.]* kW of 30 kW/);
    // An idle connector has no allocation to show.
    expect(await page.locator('[data-connector="2"] [data-field="allocation"]').count()).toBe(0);

    // The operator lowers the site to 10 kW: asked first, then the gateway's answer in words.
    const form = page.getByRole('form', { name: 'Power limit' });
    await form.getByLabel('Node').selectOption('site');
    await form.getByLabel(/^Limit \(kW\)/).fill('10');
    await form.getByLabel('Reason').fill('generator hours');
    await form.getByRole('button', { name: 'Set limit' }).click();
    const dialog = form.getByRole('dialog', { name: 'Set limit' });
    await shows(dialog, 'Limit Site to 10 kW until cleared?');
    await dialog.getByRole('button', { name: 'Yes, set limit' }).click();
    await shows(
      dialog.getByRole('status'),
      'Site is now limited to 10 kW by the operator limit, until cleared.',
    );
    await dialog.getByRole('button', { name: 'Close' }).click();
    await page.locator('[data-node="site"][data-source="operator"]').waitFor(WAIT);
    await shows(site.locator('[data-field="limit"]'), '10 kW');
    await shows(site.locator('[data-field="source"]'), 'Operator limit');
    await shows(site.locator('[data-field="until"]'), 'until cleared');
    await shows(site.locator('[data-field="override"]'), 'set by otto: “generator hours”');
    // The circuit's own limit is unchanged; the session is reallocated to the new site limit.
    await shows(bank.locator('[data-field="limit"]'), '25 kW');
    await shows(allocation, /^\s*10 kW\s*$/);

    // Above the contract the form itself stops (its max is the contract): nothing is asked or sent.
    await form.getByLabel(/^Limit \(kW\)/).fill('40');
    await form.getByRole('button', { name: 'Set limit' }).click();
    expect(await dialog.isVisible()).toBe(false);

    // A viewer sees the same panel and no form.
    const viewerContext = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const viewerPage = await logIn(viewerContext, 'vera', viewer);
    const viewerSite = viewerPage.locator('[data-node="site"]');
    await shows(viewerSite.locator('[data-field="source"]'), 'Operator limit');
    await shows(
      viewerPage.locator('[data-charger="CP-1"] [data-connector="1"] [data-field="allocation"]'),
      '10 kW',
    );
    expect(await viewerPage.getByRole('form', { name: 'Power limit' }).count()).toBe(0);
    expect(await viewerPage.getByRole('button', { name: 'Set limit' }).count()).toBe(0);
    expect(await viewerPage.getByRole('button', { name: 'Clear operator limit' }).count()).toBe(0);
    await viewerContext.close();

    // The operator clears it: the contract binds again.
    await form.getByRole('button', { name: 'Clear operator limit' }).click();
    const clearDialog = form.getByRole('dialog', { name: 'Clear operator limit' });
    await clearDialog.getByRole('button', { name: 'Yes, clear operator limit' }).click();
    await shows(
      clearDialog.getByRole('status'),
      'Cleared: Site is back to 30 kW (contracted limit).',
    );
    await clearDialog.getByRole('button', { name: 'Close' }).click();
    await page.locator('[data-node="site"][data-source="config"]').waitFor(WAIT);
    await shows(allocation, /^\s*22 kW\s*$/);
    expect(await site.locator('[data-field="override"]').count()).toBe(0);

    const audit = t.gw.db
      .prepare(
        "SELECT action, status FROM operator_audit WHERE action LIKE 'site.power.limit.%' ORDER BY rowid",
      )
      .all();
    expect(audit).toEqual([
      { action: 'site.power.limit.set', status: 200 },
      { action: 'site.power.limit.clear', status: 200 },
    ]);
    await context.close();
  });
});
