import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Browser, Page } from 'playwright-core';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { alertSite } from './helpers/alert-site.js';
import { launchChromium } from './helpers/browser.js';
import { logIn } from './helpers/console-page.js';
import { mintToken, startSession } from './helpers/http.js';
import { createOperator, op } from './helpers/operator.js';
import { waitUntil } from './helpers/wait.js';
import { WebhookReceiver } from './helpers/webhook-receiver.js';

// `npm run screenshots`: runs the demo site (`fleet-gateway demo`, its simulated chargers as child
// processes), logs in to the real console in Debian's Chromium and saves PNGs of the main views
// into docs/console/. Skipped in the normal suite: the PNGs are committed, not checked.

const ROOT = join(import.meta.dirname, '..');
const OUT = join(ROOT, 'docs', 'console');
const CLI = join(ROOT, 'dist', 'cli.js');
const WAIT = { timeout: 20_000 };

let dir: string;
let demo: ChildProcess;
let url: string;
let browser: Browser;
let credential: string;

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });
}

describe.skipIf(!process.env.CONSOLE_SCREENSHOTS)('console screenshots on the demo site', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'console-shots-'));
    const db = join(dir, 'demo.db');
    demo = spawn(process.execPath, [CLI, 'demo', '--port', '0', '--database', db], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('demo did not start in 20 s')), 20_000);
      for (const stream of [demo.stdout, demo.stderr]) {
        if (!stream) continue;
        createInterface({ input: stream }).on('line', (line) => {
          if (line.includes('"gateway listening"')) {
            clearTimeout(timer);
            resolve((JSON.parse(line) as { port: number }).port);
          }
        });
      }
    });
    url = `http://127.0.0.1:${port}`;
    // An operator of our own, made as a site's admin makes one, on the demo's database.
    const config = parse(readFileSync(join(ROOT, 'config', 'demo.yaml'), 'utf8')) as {
      database: { path: string };
    };
    config.database.path = db;
    writeFileSync(join(dir, 'demo.yaml'), stringify(config));
    const created = spawnSync(
      process.execPath,
      [
        CLI,
        'operator',
        'create',
        '--config',
        join(dir, 'demo.yaml'),
        '--name',
        'amaka',
        '--role',
        'operator',
      ],
      { encoding: 'utf8' },
    );
    const found = /fop_[A-Za-z0-9_-]+/.exec(created.stdout + created.stderr);
    if (!found) throw new Error(`operator create: ${created.stdout}${created.stderr}`);
    credential = found[0];
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    demo?.kill('SIGTERM');
    if (demo && demo.exitCode === null) await new Promise((r) => demo.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('saves the site, session, money, charger, firmware and audit trail views', async () => {
    mkdirSync(OUT, { recursive: true });
    const seed = JSON.parse(readFileSync(join(ROOT, 'config', 'demo-seed.json'), 'utf8')) as {
      fleets: { apiKeys: string[]; drivers: { email: string }[] }[];
    };
    const fleet = seed.fleets[0];
    if (!fleet) throw new Error('demo seed has no fleet');
    const email = fleet.drivers[0]?.email ?? '';
    // The demo's chargers boot as child processes: wait for the 2.0.1 one before starting on it.
    const token = await mintToken(url, fleet.apiKeys[0] ?? '', email);
    const sessionId = await waitUntil(
      async () => {
        const res = await startSession(
          url,
          token,
          { chargerId: 'CP-DC-01', connectorId: '1', driverEmail: email },
          8000,
        );
        return res.status === 200 ? (res.body as { sessionId: string }).sessionId : undefined;
      },
      20_000,
      'a session started on CP-DC-01',
    );

    // A second driver charges at the AC charger (slowly: it is still charging for the pictures).
    const tunde = fleet.drivers[1]?.email ?? '';
    const tundeToken = await mintToken(url, fleet.apiKeys[0] ?? '', tunde);
    await waitUntil(
      async () =>
        (
          await startSession(
            url,
            tundeToken,
            { chargerId: 'CP-AC-02', connectorId: '1', driverEmail: tunde },
            3000,
          )
        ).status === 200,
      20_000,
      'a session started on CP-AC-02',
    );

    const asAmaka = (method: string, path: string, body?: unknown) =>
      fetch(`${url}/admin/v1${path}`, {
        method,
        headers: {
          authorization: `Bearer ${credential}`,
          'content-type': 'application/json',
          'idempotency-key': `shot-${path}`,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    // A connector an operator took out of service: the site view says who, since when and why.
    const held = await asAmaka('POST', '/chargers/CP-DC-01/connectors/2/availability', {
      operative: false,
      reason: 'cable sheath split, replacement ordered',
    });
    if (held.status !== 200) throw new Error(`out of service: ${await held.text()}`);

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${url}/console`);
    await page.getByLabel('Operator name').fill('amaka');
    await page.getByLabel('Credential').fill(credential);
    await page.getByRole('button', { name: 'Log in' }).click();
    const tile = page.locator('[data-charger="CP-DC-01"] [data-connector="1"]');
    await tile.locator('[data-status="charging"]').waitFor(WAIT);
    await tile
      .locator('[data-field="energy"]')
      .filter({ hasText: /[1-9][\d.,]* kWh/ })
      .waitFor(WAIT);
    await page
      .locator('[data-charger="CP-AC-02"] [data-field="power"]')
      .filter({ hasText: /kW/ })
      .waitFor(WAIT);
    await page
      .locator('[data-charger="CP-DC-01"] [data-connector="2"] [data-field="out-of-service"]')
      .waitFor(WAIT);
    await page.locator('[data-live="live"]').waitFor(WAIT);
    await shot(page, 'site');

    const phone = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const small = await phone.newPage();
    await small.goto(`${url}/console`);
    await small.getByLabel('Operator name').fill('amaka');
    await small.getByLabel('Credential').fill(credential);
    await small.getByRole('button', { name: 'Log in' }).click();
    await small.locator('[data-charger="CP-DC-01"] [data-status="charging"]').waitFor(WAIT);
    await shot(small, 'site-phone');
    await phone.close();

    // The session's page once it has settled: the whole curve, the stop and the settlement.
    await waitUntil(
      async () => {
        const res = await page.request.get(`${url}/admin/v1/sessions/${sessionId}`);
        const body = (await res.json()) as { session: { state: string } };
        return body.session.state === 'settled';
      },
      90_000,
      `session ${sessionId} settled`,
    );
    await page.goto(`${url}/console/sessions/${sessionId}`);
    await page.locator('.plot canvas').waitFor(WAIT);
    await shot(page, 'session');

    await page.goto(`${url}/console/money`);
    await page.getByRole('heading', { name: 'Drivers and wallets' }).waitFor(WAIT);
    await shot(page, 'money');

    await page.goto(`${url}/console/chargers/CP-DC-01`);
    await page.getByRole('heading', { name: 'Boot details' }).waitFor(WAIT);
    await shot(page, 'charger');

    // Firmware and logs: a file uploaded, sent to the settled DC charger, a log from the AC one.
    await page.goto(`${url}/console/firmware`);
    await page.getByRole('heading', { name: 'Firmware and logs' }).waitFor(WAIT);
    await page.getByLabel('Upload a firmware file').setInputFiles({
      name: 'dc-charger-4.2.0.bin',
      mimeType: 'application/octet-stream',
      buffer: Buffer.alloc(48_000, 5),
    });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByRole('button', { name: 'Yes, upload' }).click();
    await page.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('combobox', { name: 'Charger', exact: true }).selectOption('CP-DC-01');
    await page.getByRole('button', { name: 'Update firmware' }).click();
    await page.getByRole('button', { name: 'Yes, update firmware' }).click();
    await page.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('combobox', { name: 'Charger', exact: true }).selectOption('CP-AC-02');
    await page.getByRole('button', { name: 'Request log' }).click();
    await page.getByRole('button', { name: 'Yes, request log' }).click();
    await page.getByRole('button', { name: 'Close' }).click();
    const jobs = page.getByRole('table', { name: 'Jobs' });
    await jobs.filter({ hasText: 'Installed' }).waitFor(WAIT);
    await jobs.filter({ hasText: 'Uploaded' }).waitFor(WAIT);
    await jobs.getByRole('button').last().click();
    await page.locator('.history').filter({ hasText: 'Installed' }).waitFor(WAIT);
    await shot(page, 'firmware');

    // The audit trail after a few things an operator does at a site.
    await asAmaka('POST', '/drivers/drv-tunde/top-ups', {
      amount: 5000,
      reason: 'cash at the kiosk, receipt 0412',
    });
    await asAmaka('PUT', '/fleets/demo-fleet', { name: 'Demo Logistics Ltd, Ikeja depot' });
    await asAmaka('PUT', '/fleets/demo-flet', { name: 'typo' });
    await (await asAmaka('GET', '/exports/ledger.csv?fleetId=demo-fleet')).text();
    await page.goto(`${url}/console/audit`);
    await page.locator('[data-table="audit"] [data-action="wallet.top_up"]').waitFor(WAIT);
    await shot(page, 'audit');
    await context.close();
  }, 180_000);

  it('saves the tariffs view, with a tariff given evening and weekend-night prices', async () => {
    mkdirSync(OUT, { recursive: true });
    const set = spawnSync(
      process.execPath,
      [
        CLI,
        'tariff',
        'set',
        'dc-fast',
        '412.5',
        '--window',
        'mon,tue,wed,thu,fri 18:00-22:00 480',
        '--window',
        'sat,sun 22:00-06:00 380',
        '--url',
        url,
      ],
      { encoding: 'utf8', env: { ...process.env, FLEET_GATEWAY_OPERATOR_CREDENTIAL: credential } },
    );
    if (set.status !== 0) throw new Error(`tariff set: ${set.stdout}${set.stderr}`);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${url}/console/tariffs`);
    await page.getByLabel('Operator name').fill('amaka');
    await page.getByLabel('Credential').fill(credential);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.locator('[data-tariff="dc-fast"] table.windows').waitFor(WAIT);
    await shot(page, 'tariffs');
    await context.close();
  }, 60_000);
});

describe.skipIf(!process.env.CONSOLE_SCREENSHOTS)('console screenshot of the alerts', () => {
  it('saves the alerts view of a site whose chargers raised them', async () => {
    // Not the demo: its chargers behave. These alerts come from raw chargers (helpers/alert-site.ts),
    // their events go to a webhook receiver that takes them.
    const hook = new WebhookReceiver();
    await hook.start();
    const site = await alertSite({ url: hook.url, secret: 'screenshot-webhook-secret' });
    const browser = await launchChromium();
    try {
      const amaka = createOperator(site.t.gw.db, 'amaka', 'operator');
      const offline = site.t.gw.db
        .prepare("SELECT id FROM alerts WHERE kind = 'charger_offline' AND subject = 'CP-OFF'")
        .get() as { id: string };
      await op(site.t.gw.operatorUrl, amaka, 'POST', `/alerts/${offline.id}/acknowledge`);
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await logIn(context, site.t.gw.operatorUrl, 'amaka', amaka);
      await page.goto(`${site.t.gw.operatorUrl}/console/alerts?state=all`);
      await page.locator('[data-alert="stop_escalated"]').waitFor(WAIT);
      await page.locator('[data-live="live"]').waitFor(WAIT);
      await page.getByText('Webhook: nothing waiting').waitFor(WAIT);
      await shot(page, 'alerts');
      await context.close();
    } finally {
      await browser.close();
      await site.close();
      await hook.stop();
    }
  }, 60_000);
});
