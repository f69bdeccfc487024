import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertSite, type AlertSite } from './helpers/alert-site.js';
import { launchChromium } from './helpers/browser.js';
import { logIn, shows, WAIT } from './helpers/console-page.js';
import { createOperator } from './helpers/operator.js';
import { WebhookReceiver } from './helpers/webhook-receiver.js';

// The console's Alerts view in a real browser (headless Debian Chromium), on a site whose alerts
// real chargers caused (helpers/alert-site.ts) and whose webhook is a real receiver: the count
// from the site view, the list in words with each event's delivery, an operator's acknowledgement
// and test alert through the page, and a viewer without either.

let hook: WebhookReceiver;
let site: AlertSite;
let browser: Browser;
let operator: string;
let viewer: string;

beforeAll(async () => {
  hook = new WebhookReceiver();
  await hook.start();
  site = await alertSite({
    url: hook.url,
    secret: 'console-webhook-secret-0123',
    retrySeconds: 0.5,
  });
  operator = createOperator(site.t.gw.db, 'olu', 'operator');
  viewer = createOperator(site.t.gw.db, 'vic', 'viewer');
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
  await hook?.stop();
});

describe('the console alerts view', () => {
  it('shows the open count on the site view, lists the alerts and acknowledges an operator loss', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await logIn(context, site.t.gw.operatorUrl, 'olu', operator);
    // Offline CP-AC and CP-OFF, CP-1 connector 2 faulted, the operator loss.
    await shows(page.locator('.site-alerts'), '4 alerts open');
    await page.locator('header [data-open-alerts="4"]').waitFor(WAIT);

    await page.locator('.site-alerts a').click();
    await page.getByRole('heading', { name: 'Alerts' }).waitFor(WAIT);
    const rows = page.locator('tbody tr');
    await expect.poll(() => rows.count(), WAIT).toBe(4);
    await shows(
      page.locator('[data-alert="charger_offline"][data-subject="CP-OFF"]'),
      'Charger offline',
    );
    await shows(page.locator('[data-alert="charger_faulted"]'), 'Error code GroundFailure');
    const loss = page.locator(`[data-alert="operator_loss"][data-subject="${site.sessionId}"]`);
    await shows(loss, /kWh delivered beyond what was paid/);

    await loss.getByRole('button', { name: 'Acknowledge' }).click();
    const dialog = page.getByRole('dialog', { name: 'Acknowledge' });
    await shows(dialog, 'This also clears it.');
    await dialog.getByRole('button', { name: 'Yes, acknowledge' }).click();
    // Cleared: it leaves the open list (and its dialog with it).
    await expect.poll(() => rows.count(), WAIT).toBe(3);
    await page.locator('header [data-open-alerts="3"]').waitFor(WAIT);

    await page.getByRole('button', { name: 'Closed' }).click();
    await shows(page.locator(`[data-alert="operator_loss"]`), 'olu');
    await shows(page.locator('[data-alert="stop_escalated"]'), 'zero_power');
    const audit = site.t.gw.db
      .prepare("SELECT operator_name FROM operator_audit WHERE action = 'alert.acknowledge'")
      .all();
    expect(audit).toEqual([{ operator_name: 'olu' }]);
    await context.close();
  }, 60_000);

  it('shows each event’s webhook delivery, and an operator’s test alert reaches the receiver', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await logIn(context, site.t.gw.operatorUrl, 'olu', operator);
    await page.goto(`${site.t.gw.operatorUrl}/console/alerts?state=all`);
    const escalated = page.locator('[data-alert="stop_escalated"]');
    // Raised and cleared, each taken by the receiver at the first attempt.
    await shows(
      escalated.locator('[data-delivery="alert.raised"]'),
      /Raised: delivered .* \(1 attempt\)/,
    );
    await shows(escalated.locator('[data-delivery="alert.cleared"]'), /Cleared: delivered/);
    await shows(page.locator('.webhook-state'), 'Webhook: nothing waiting');

    // The receiver refuses the next request: the test alert is retried, then taken.
    hook.answers.push(503);
    const before = hook.requests.length;
    await page.getByRole('button', { name: 'Send a test alert' }).click();
    const dialog = page.getByRole('dialog', { name: 'Send a test alert' });
    await dialog.getByRole('button', { name: 'Yes, send a test alert' }).click();
    await shows(dialog.getByRole('status'), /The receiver took it: delivered .* \(2 attempts\)/);
    const sent = hook.events().slice(before);
    expect(sent.map((e) => e.type)).toEqual(['alert.test', 'alert.test']);
    expect(new Set(sent.map((e) => e.id)).size).toBe(1);
    const audit = site.t.gw.db
      .prepare("SELECT operator_name FROM operator_audit WHERE action = 'alert.test'")
      .all();
    expect(audit).toEqual([{ operator_name: 'olu' }]);
    await context.close();
  }, 60_000);

  it('shows a viewer the alerts and deliveries without an Acknowledge or test button', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await logIn(context, site.t.gw.operatorUrl, 'vic', viewer);
    await page.goto(`${site.t.gw.operatorUrl}/console/alerts`);
    await page.locator('[data-alert="charger_faulted"]').waitFor(WAIT);
    await shows(page.locator('[data-alert="charger_faulted"] [data-delivery]'), /delivered/);
    expect(await page.getByRole('button', { name: 'Acknowledge' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Send a test alert' }).count()).toBe(0);
    await context.close();
  });
});
