import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHARGER_PASSWORD, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { rawCharger, type RawClient } from './helpers/raw-charger.js';
import { waitUntil } from './helpers/wait.js';
import { gatewayHealth } from './helpers/operator.js';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway();
});
afterAll(async () => {
  await t.close();
});

function events(chargerId: string): { action: string; note: string }[] {
  return t.gw.db
    .prepare('SELECT action, note FROM ocpp_events WHERE charger_id = ? ORDER BY seq')
    .all(chargerId) as { action: string; note: string }[];
}

describe('OCPP 1.6J central system', () => {
  it('refuses unknown charge points and wrong passwords before the upgrade', async () => {
    await expect(rawCharger(t.gw.ocppUrl, 'CP-UNKNOWN', CHARGER_PASSWORD)).rejects.toThrow(
      /Not Found/,
    );
    await expect(rawCharger(t.gw.ocppUrl, 'CP-1', 'wrong-password-000000')).rejects.toThrow(
      /Unauthorized/,
    );
    await expect(rawCharger(t.gw.ocppUrl, 'CP-1', undefined)).rejects.toThrow(/Unauthorized/);
    const log = t.logLines.join('\n');
    expect(log).toContain('CP-UNKNOWN');
    expect(log).not.toContain('wrong-password-000000');
  });

  it('refuses upgrades outside the OCPP path', async () => {
    const bad = t.gw.ocppUrl.replace('/ocpp', '/other');
    await expect(rawCharger(bad, 'CP-1', CHARGER_PASSWORD)).rejects.toThrow();
  });

  it('answers boot, heartbeat and status, configures the charger, and keeps connector state', async () => {
    const cp = await rawCharger(t.gw.ocppUrl, 'CP-AC', CHARGER_PASSWORD);
    const configured: Record<string, string> = {};
    cp.handle('ChangeConfiguration', async ({ params }) => {
      const { key, value } = params as { key: string; value: string };
      configured[key] = value;
      return { status: 'Accepted' };
    });
    try {
      const boot = (await cp.call('BootNotification', {
        chargePointVendor: 'Acme',
        chargePointModel: 'AC22',
        firmwareVersion: '1.2.3',
      })) as { status: string; interval: number; currentTime: string };
      expect(boot.status).toBe('Accepted');
      expect(boot.interval).toBe(300);
      expect(Date.parse(boot.currentTime)).not.toBeNaN();
      await waitUntil(() => Object.keys(configured).length === 4, 5000, 'ChangeConfiguration');
      expect(configured).toEqual({
        MeterValueSampleInterval: '10',
        MeterValuesSampledData: 'Energy.Active.Import.Register,Power.Active.Import,SoC',
        // 80% of the 5 s start timeout: the charger gives up before the gateway refunds.
        ConnectionTimeOut: '4',
        StopTransactionOnInvalidId: 'true',
      });
      const hb = (await cp.call('Heartbeat', {})) as { currentTime: string };
      expect(Date.parse(hb.currentTime)).not.toBeNaN();
      await cp.call('StatusNotification', {
        connectorId: 1,
        errorCode: 'NoError',
        status: 'Preparing',
      });
      await cp.call('MeterValues', {
        connectorId: 1,
        meterValue: [
          {
            timestamp: new Date().toISOString(),
            sampledValue: [{ value: '41.5', measurand: 'SoC', unit: 'Percent' }],
          },
        ],
      });
      const row = t.gw.db
        .prepare(
          "SELECT status, soc_percent FROM connector_state WHERE charger_id = 'CP-AC' AND connector_id = '1'",
        )
        .get();
      expect(row).toEqual({ status: 'occupied', soc_percent: 41.5 });
      const info = t.gw.db
        .prepare(
          "SELECT vendor, model, firmware_version FROM charger_info WHERE charger_id = 'CP-AC'",
        )
        .get();
      expect(info).toEqual({ vendor: 'Acme', model: 'AC22', firmware_version: '1.2.3' });
    } finally {
      await cp.close();
    }
  });

  it('refuses a transaction it did not start, and answers unknown stops and data transfers', async () => {
    const cp: RawClient = await rawCharger(t.gw.ocppUrl, 'CP-AC', CHARGER_PASSWORD);
    try {
      const auth = (await cp.call('Authorize', { idTag: 'RANDOMTAG' })) as {
        idTagInfo: { status: string };
      };
      expect(auth.idTagInfo.status).toBe('Invalid');
      const start = (await cp.call('StartTransaction', {
        connectorId: 1,
        idTag: 'RANDOMTAG',
        meterStart: 100,
        timestamp: new Date().toISOString(),
      })) as { transactionId: number; idTagInfo: { status: string } };
      expect(start.idTagInfo.status).toBe('Invalid');
      expect(start.transactionId).toBeGreaterThan(0);
      const stop = await cp.call('StopTransaction', {
        transactionId: 987654,
        meterStop: 200,
        timestamp: new Date().toISOString(),
      });
      expect(stop).toEqual({});
      const dt = (await cp.call('DataTransfer', {
        vendorId: 'com.acme',
        messageId: 'hello',
        data: 'x',
      })) as {
        status: string;
      };
      expect(dt.status).toBe('UnknownVendorId');
      const notes = events('CP-AC').map((e) => `${e.action}: ${e.note}`);
      expect(notes).toContain('StartTransaction: transaction not started by us: Invalid');
      expect(notes).toContain('StopTransaction: unknown transactionId');
      expect(notes).toContain('DataTransfer: vendor com.acme');
      expect(t.gw.db.prepare('SELECT count(*) AS n FROM sessions').get()).toEqual({ n: 0 });
    } finally {
      await cp.close();
    }
  });

  it('answers a repeated StartTransaction (lost reply) with the same transactionId', async () => {
    const cp = await rawCharger(t.gw.ocppUrl, 'CP-AC', CHARGER_PASSWORD);
    try {
      const req = {
        connectorId: 1,
        idTag: 'SOMETAG',
        meterStart: 5,
        timestamp: '2026-11-22T08:00:00.000Z',
      };
      const a = (await cp.call('StartTransaction', req)) as { transactionId: number };
      const b = (await cp.call('StartTransaction', req)) as { transactionId: number };
      expect(b.transactionId).toBe(a.transactionId);
      // Stamped anew, same register: still the open one. Once it is stopped, a new transaction.
      const restamped = { ...req, timestamp: '2026-11-22T08:00:30.000Z' };
      const c = (await cp.call('StartTransaction', restamped)) as { transactionId: number };
      expect(c).toEqual(a);
      const other = { ...restamped, meterStart: 6 };
      expect(await cp.call('StartTransaction', other)).not.toMatchObject(a);
      await cp.call('StopTransaction', {
        transactionId: a.transactionId,
        meterStop: 5,
        timestamp: '2026-11-22T08:01:00.000Z',
      });
      const later = { ...req, timestamp: '2026-11-22T08:02:00.000Z' };
      expect(await cp.call('StartTransaction', later)).not.toMatchObject(a);
    } finally {
      await cp.close();
    }
  });

  it('a start is the open transaction whose connector, idTag and meterStart it repeats, or its exact repeat; else a new one (fast-check)', async () => {
    // CP-OFF: every start here is refused (Invalid) and stopped by the gateway; no other test's.
    const cp = await rawCharger(t.gw.ocppUrl, 'CP-OFF', CHARGER_PASSWORD);
    const start = fc.record({
      connectorId: fc.constantFrom(1, 2),
      tag: fc.constantFrom('A', 'B'),
      meterStart: fc.constantFrom(5, 6),
      minute: fc.nat(3),
    });
    interface Known {
      id: number;
      connectorId: number;
      idTag: string;
      meterStart: number;
      timestamp: string;
      open: boolean;
    }
    let run = 0;
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.oneof(start, fc.record({ stop: fc.nat() })), { maxLength: 12 }),
          async (steps) => {
            run++;
            const known: Known[] = [];
            for (const step of steps) {
              if ('stop' in step) {
                const tx = known[step.stop % Math.max(known.length, 1)];
                if (!tx) continue;
                await cp.call('StopTransaction', {
                  transactionId: tx.id,
                  meterStop: tx.meterStart,
                  timestamp: '2026-11-22T09:00:00.000Z',
                });
                tx.open = false;
                continue;
              }
              const req = {
                connectorId: step.connectorId,
                idTag: `RUN${run}-${step.tag}`,
                meterStart: step.meterStart,
                timestamp: `2026-11-22T08:0${step.minute}:00.000Z`,
              };
              const { transactionId } = (await cp.call('StartTransaction', req)) as {
                transactionId: number;
              };
              const same = (k: Known) => k.connectorId === req.connectorId && k.idTag === req.idTag;
              const meant =
                known.find((k) => same(k) && k.timestamp === req.timestamp) ??
                known.find((k) => same(k) && k.open && k.meterStart === req.meterStart);
              if (meant) {
                expect(transactionId).toBe(meant.id);
                continue;
              }
              expect(known.map((k) => k.id)).not.toContain(transactionId);
              known.push({ ...req, id: transactionId, open: true });
            }
          },
        ),
        { numRuns: 40 },
      );
    } finally {
      await cp.close();
    }
  });

  it('a second connection for the same charger replaces the first', async () => {
    const first = await rawCharger(t.gw.ocppUrl, 'CP-AC', CHARGER_PASSWORD);
    const closed = new Promise<void>((resolve) => first.once('close', () => resolve()));
    const second = await rawCharger(t.gw.ocppUrl, 'CP-AC', CHARGER_PASSWORD);
    try {
      await closed;
      const hb = await second.call('Heartbeat', {});
      expect(hb).toHaveProperty('currentTime');
      expect(await gatewayHealth(t.gw.operatorUrl, t.gw.db)).toMatchObject({ chargersOnline: 1 });
    } finally {
      await second.close();
    }
  });

  it('takes a charger that offers no subprotocol as 1.6J, still validating its frames', async () => {
    const cp = await rawCharger(t.gw.ocppUrl, 'CP-AC', CHARGER_PASSWORD, []);
    try {
      expect(await cp.call('Heartbeat', {})).toHaveProperty('currentTime');
      await expect(
        cp.call('StatusNotification', { connectorId: 'one', status: 'Nope' }),
      ).rejects.toThrow(/required property 'errorCode'/);
      await cp.call('StatusNotification', {
        connectorId: 1,
        errorCode: 'NoError',
        status: 'Available',
      });
    } finally {
      await cp.close();
    }
  });

  it('rejects schema-invalid frames with a CALLERROR (strict mode)', async () => {
    const cp = await rawCharger(t.gw.ocppUrl, 'CP-AC', CHARGER_PASSWORD);
    try {
      await expect(
        cp.call('StatusNotification', { connectorId: 'one', status: 'Nope' }),
      ).rejects.toThrow();
      await expect(cp.call('StartTransaction', { connectorId: 1 })).rejects.toThrow();
    } finally {
      await cp.close();
    }
  });
});
