import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './helpers/browser.js';
import { logIn as logInAt, shows, WAIT } from './helpers/console-page.js';
import { API_KEY, DRIVERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { mintToken, startSession } from './helpers/http.js';
import { createOperator, op } from './helpers/operator.js';
import {
  bootedCharger,
  IONIQ,
  ocpp201,
  type SimulatedChargePoint,
} from './helpers/simulated-charger.js';

// The site console in a real browser (headless Debian Chromium) against a real gateway and a real
// simulated charger: everything the operator does goes through the page, as a person would.

let t: TestGateway;
let browser: Browser;
let cp: SimulatedChargePoint;
let operator: string;
let viewer: string;
const logIn = (context: BrowserContext, name: string, credential: string) =>
  logInAt(context, t.gw.operatorUrl, name, credential);

beforeAll(async () => {
  // Not the default zone: the page must show times in the site's, from the gateway.
  t = await startTestGateway({ site: { timeZone: 'Asia/Kolkata' } });
  operator = createOperator(t.gw.db, 'otto', 'operator');
  viewer = createOperator(t.gw.db, 'vera', 'viewer');
  // Slow enough that the session is still charging while the test watches it (50 kW, 10x real
  // time: a 5000 NGN session lasts about 90 s), a meter sample about every second.
  cp = await bootedCharger(ocpp201, t.gw, 'CP-1', { maxPowerW: 50_000, timeFactor: 10 });
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await cp?.disconnect();
  await t?.close();
});

describe('the site console in a browser', () => {
  it('shows a session start live, its plot, unlocks a connector and tops up a wallet', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await logIn(context, 'otto', operator);
    await page.locator('[data-live="live"]').waitFor(WAIT);
    await shows(page.locator('header'), 'times in Asia/Kolkata');
    const tile = page.locator('[data-charger="CP-1"] [data-connector="1"]');
    await tile.locator('[data-status="available"]').waitFor(WAIT);
    // A mark on the page: still there at the end means the tile changed without a reload.
    await page.evaluate('window.__noReload = true');

    await cp.plugIn(1, IONIQ);
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const started = await startSession(
      t.gw.url,
      token,
      { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email },
      5000,
    );
    expect(started.status).toBe(200);
    const sessionId = (started.body as { sessionId: string }).sessionId;

    await tile.locator('[data-status="charging"]').waitFor(WAIT);
    await expect
      .poll(() => tile.locator('[data-field="power"]').textContent(), WAIT)
      .toMatch(/\d kW$/);
    await expect
      .poll(() => tile.locator('[data-field="energy"]').textContent(), WAIT)
      .toMatch(/[1-9][\d.,]* kWh$/);
    expect(await page.evaluate('window.__noReload')).toBe(true);

    // Its plot: power and energy against the paid energy line.
    await tile.getByRole('link', { name: /Session charging/ }).click();
    await page.getByRole('heading', { name: `Session ${sessionId}` }).waitFor(WAIT);
    await page.locator('.plot canvas').waitFor(WAIT);
    await shows(page.locator('.plot .u-legend'), 'Paid energy (kWh)');
    await shows(page.locator('.ledger [data-kind="session_debit"]'), '-₦5,000');

    // Unlock connector 2 from the charger page: asked first, then the charger's reply shown.
    await page.getByRole('link', { name: 'CP-1' }).first().click();
    const connector2 = page.locator('[data-connector="2"]');
    await connector2.getByRole('button', { name: 'Unlock' }).click();
    const dialog = connector2.getByRole('dialog');
    await shows(dialog, 'Unlock the cable of CP-1 connector 2?');
    await dialog.getByRole('button', { name: 'Yes, unlock' }).click();
    await shows(dialog.getByRole('status'), 'answered “Unlocked”');
    await dialog.getByRole('button', { name: 'Close' }).click();
    // The messages just exchanged with the charger, read again after the command.
    const calls = page.locator('[data-table="calls"]');
    await shows(calls, 'UnlockConnector');

    // Top up Bola's wallet with a reason: the entry appears in the driver's ledger.
    await page.getByRole('link', { name: 'Money' }).click();
    await page.locator('[data-table="energy"] [data-charger="CP-1"]').waitFor(WAIT);
    await page.getByRole('link', { name: DRIVERS.bola.id }).click();
    const form = page.getByRole('form', { name: 'Top up' });
    await form.getByLabel('Amount (NGN)').fill('2500');
    await form.getByLabel('Reason (optional)').fill('cash at the kiosk, receipt 0412');
    await form.getByRole('button', { name: 'Top up' }).click();
    await shows(form.getByRole('status'), 'balance now ₦5,500');
    const entry = page.locator('.ledger [data-kind="top_up"]');
    await shows(entry, '₦2,500');
    await shows(entry, 'cash at the kiosk, receipt 0412');
    await expect
      .poll(() => page.locator('[data-field="balance"]').textContent(), WAIT)
      .toBe('₦5,500');

    // A refusal is said in the gateway's words, and moves nothing.
    const adjust = page.getByRole('form', { name: 'Adjust' });
    await adjust.getByLabel('Amount (NGN)').fill('-100000');
    await adjust.getByLabel('Reason').fill('charged twice');
    await adjust.getByRole('button', { name: 'Adjust' }).click();
    await shows(adjust.getByRole('status'), 'balance 5500 NGN cannot be debited 100000 NGN');
    expect(await page.locator('[data-field="balance"]').textContent()).toBe('₦5,500');

    // A request forged from elsewhere rides on the cookie but cannot know the CSRF token.
    const forged = await page.evaluate(`(async () => {
      const res = await fetch('/admin/v1/chargers/CP-1/connectors/2/unlock', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      return { status: res.status, body: await res.json() };
    })()`);
    expect(forged).toMatchObject({ status: 403, body: { error: { code: 'csrf_failed' } } });

    // Logout: the page asks for a login again and the cookie no longer opens the API.
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('Operator name').waitFor(WAIT);
    expect((await context.request.get(`${t.gw.operatorUrl}/admin/v1/status`)).status()).toBe(401);
    await context.close();
  });

  it('shows a viewer no action buttons, and the gateway refuses a forged action', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await logIn(context, 'vera', viewer);
    await page.goto(`${t.gw.operatorUrl}/console/chargers/CP-1`);
    await page.locator('[data-connector="2"]').waitFor(WAIT);
    await page.getByRole('heading', { name: 'Boot details' }).waitFor(WAIT);
    for (const name of ['Unlock', 'Soft reset', 'Hard reset', 'Stop session']) {
      expect(await page.getByRole('button', { name }).count()).toBe(0);
    }
    await page.goto(`${t.gw.operatorUrl}/console/money/drivers/${DRIVERS.bola.id}`);
    await page.getByRole('heading', { name: 'Ledger' }).waitFor(WAIT);
    expect(await page.getByRole('form', { name: 'Top up' }).count()).toBe(0);

    // The viewer's own browser, with its cookie and its CSRF token, sends the action anyway.
    const forged = await page.evaluate(`(async () => {
      const who = await (await fetch('/console/session')).json();
      const res = await fetch('/admin/v1/chargers/CP-1/connectors/2/unlock', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': who.csrfToken },
        body: '{}',
      });
      return { status: res.status, body: await res.json() };
    })()`);
    expect(forged).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    const audit = t.gw.db
      .prepare(
        "SELECT count(*) AS n FROM operator_audit WHERE action = 'charger.unlock' AND status = 403",
      )
      .get() as { n: number };
    expect(audit.n).toBe(1);
    await context.close();
  });

  it('shows the audit trail: who did what, with what, and the answer, refusals too', async () => {
    const renamed = await op(t.gw.operatorUrl, operator, 'PUT', '/fleets/fleet-b', {
      name: 'Fleet B, Ikeja',
    });
    expect(renamed.status).toBe(200);
    const refused = await op(t.gw.operatorUrl, viewer, 'DELETE', '/fleets/fleet-b');
    expect(refused.status).toBe(403);

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await logIn(context, 'vera', viewer);
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Audit trail' })
      .click();
    await page.getByRole('heading', { name: 'Audit trail' }).waitFor(WAIT);
    const rename = page.locator('[data-table="audit"] [data-action="fleet.upsert"]').first();
    await shows(rename, 'otto');
    await shows(rename, 'fleetId: fleet-b, name: Fleet B, Ikeja');
    await shows(rename, '200');
    const denied = page.locator('[data-table="audit"] [data-action="fleet.delete"]').first();
    await shows(denied, 'vera');
    await shows(denied, '403');
    await shows(denied, 'error: forbidden');
    // Newest first: the refusal came after the rename.
    const actions = await page
      .locator('[data-table="audit"] tbody tr')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-action')));
    expect(actions.indexOf('fleet.delete')).toBeLessThan(actions.indexOf('fleet.upsert'));
    await context.close();
  });

  it('says who took a connector out of service, since when and why, on the charger page and live on the site view', async () => {
    // A viewer watches the site view, the first page an operator looks at: it must follow without
    // a reload.
    const viewing = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const site = await logIn(viewing, 'vera', viewer);
    await site.locator('[data-live="live"]').waitFor(WAIT);
    const tile = site.locator('[data-charger="CP-1"]');
    await tile.locator('[data-connector="2"]').waitFor(WAIT);
    await site.evaluate('window.__noReload = true');

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await logIn(context, 'otto', operator);
    await page.goto(`${t.gw.operatorUrl}/console/chargers/CP-1`);
    const connector2 = page.locator('[data-connector="2"]');
    await connector2.getByRole('button', { name: 'Out of service' }).click();
    const dialog = connector2.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Yes, out of service' }).click();
    await shows(dialog.getByRole('status'), 'answered “Accepted”');
    await dialog.getByRole('button', { name: 'Close' }).click();
    // Since when: the hold's own time, in the site's zone (Asia/Kolkata), not the browser's.
    const held = t.gw.db
      .prepare(
        "SELECT set_at AS at FROM operator_availability WHERE charger_id = 'CP-1' AND connector_id = '2'",
      )
      .get() as { at: string };
    const since = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Asia/Kolkata',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    }).format(new Date(held.at));
    const note = new RegExp(`^Out of service since .*${since}, by otto: “from the site console”$`);
    await shows(connector2.locator('[data-field="out-of-service"]'), note);
    expect(await page.locator('[data-connector="1"] [data-field="out-of-service"]').count()).toBe(
      0,
    );

    await shows(tile.locator('[data-connector="2"] [data-field="out-of-service"]'), note);
    await shows(tile.locator('[data-connector="2"] [data-status]'), 'Out of service');
    expect(await tile.locator('[data-connector="1"] [data-field="out-of-service"]').count()).toBe(
      0,
    );

    await connector2.getByRole('button', { name: 'Into service' }).click();
    await dialog.getByRole('button', { name: 'Yes, into service' }).click();
    await shows(dialog.getByRole('status'), 'answered “Accepted”');
    await dialog.getByRole('button', { name: 'Close' }).click();
    await connector2
      .locator('[data-field="out-of-service"]')
      .waitFor({ ...WAIT, state: 'detached' });
    await tile.locator('[data-field="out-of-service"]').waitFor({ ...WAIT, state: 'detached' });

    // The whole charger, through the API and without a reason: the tile says so, not a blank.
    const whole = async (operative: boolean) =>
      expect(
        (await op(t.gw.operatorUrl, operator, 'POST', '/chargers/CP-1/availability', { operative }))
          .status,
      ).toBe(200);
    await whole(false);
    await shows(
      tile.locator('[data-field="out-of-service"]'),
      /^The whole charger is out of service since .*, by otto: no reason given$/,
    );
    await whole(true);
    await tile.locator('[data-field="out-of-service"]').waitFor({ ...WAIT, state: 'detached' });
    expect(await site.evaluate('window.__noReload')).toBe(true);
    await viewing.close();
    await context.close();
  });
});
