import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../src/cli/offline/verify-ledger.js';
import { ChargePoint21 } from '../simulators/ocpp21/charge-point.js';
import {
  API_KEY,
  CHARGER_PASSWORD,
  DRIVERS,
  PASSWORD_HASH,
  startTestGateway,
  testChargers,
  type TestGateway,
} from './helpers/gateway.js';
import { mintToken, startSession } from './helpers/http.js';
import { IONIQ } from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';

// A 2.1 station charging paid app sessions through the gateway end to end. The station is strict
// (ocpp-rpc with 2.1's schemas, both ways): a frame of the gateway's that 2.1 forbids is refused
// and shows as a warning. Whichever line stops the session (the gateway's own stop at the paid
// energy, or the station's limit once the gateway hands it one), the energy is the paid energy
// within one sample and the money is the gateway's; a station that ignores the limit is stopped
// by the gateway.

const PRICE_PER_KWH = 412.5;
const AMOUNT = 1_000; // 2,424 Wh at 412.5 NGN/kWh
const SAMPLE_SECONDS = 10; // the test gateway's meterSampleIntervalSeconds
const MAX_POWER_W = 150_000;
// As personalities-e2e: a gateway slowed by a loaded machine still answers within a sample.
const TIME_FACTOR = 30;
const SAMPLE_WH = Math.ceil((MAX_POWER_W * SAMPLE_SECONDS) / 3600);

interface SessionRow {
  id: string;
  state: string;
  amount: number;
  limit_wh: number;
  delivered_wh: number | null;
  cost: number | null;
  stop_line: string | null;
}

let t: TestGateway;

beforeAll(async () => {
  t = await startTestGateway({
    chargers: [
      ...testChargers(),
      ...['CP-21', 'CP-21-IGN'].map((id) => ({
        id,
        passwordHash: PASSWORD_HASH,
        connectors: [{ id: '1', tariff: 'dc' as const, maxPowerKw: 1_000_000_000 }],
      })),
    ],
  });
});

afterAll(async () => {
  await t.close();
});

const session = (id: string) =>
  t.gw.db.prepare('SELECT * FROM sessions WHERE id = ?').get(id) as SessionRow;
const moved = (sessionId: string): number =>
  (
    t.gw.db
      .prepare('SELECT COALESCE(SUM(amount), 0) AS n FROM ledger_entries WHERE session_id = ?')
      .get(sessionId) as { n: number }
  ).n;

async function station(id: string, personality?: string) {
  const warnings: unknown[] = [];
  const cp = new ChargePoint21({
    url: t.gw.ocppUrl,
    identity: id,
    password: CHARGER_PASSWORD,
    connectors: 1,
    maxPowerW: MAX_POWER_W,
    timeFactor: TIME_FACTOR,
    ...(personality === undefined ? {} : { personality }),
  });
  cp.on('warning', ({ error }) => warnings.push(error));
  await cp.connect();
  await waitUntil(
    () =>
      t.gw.db
        .prepare('SELECT protocol FROM charger_info WHERE charger_id = ? AND booted_at IS NOT NULL')
        .get(id),
    5000,
    `${id} booted`,
  );
  return { cp, warnings };
}

/** Plugs in, pays AMOUNT from the app, waits for the stop and the settlement. */
async function paidSession(cp: ChargePoint21, chargerId: string) {
  await cp.plugIn(1, IONIQ);
  const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
  const started = cp.waitFor('transactionStarted', () => true, 10_000);
  const stopped = cp.waitFor('transactionStopped', () => true, 30_000);
  const res = await startSession(
    t.gw.url,
    token,
    { chargerId, connectorId: '1', driverEmail: DRIVERS.ada.email },
    AMOUNT,
  );
  expect(res.status).toBe(200);
  const { sessionId } = res.body as { sessionId: string };
  const tx = await started;
  const stop = await stopped;
  const s = await waitUntil(
    () => (session(sessionId).state === 'settled' ? session(sessionId) : undefined),
    10_000,
    'settlement',
  );
  return { s, delivered: stop.meterStop - tx.meterStart, reason: stop.reason };
}

function assertPaidAndSettled(s: SessionRow, delivered: number): void {
  // The paid energy, within one sample, whichever line stopped it.
  expect(delivered).toBeGreaterThanOrEqual(s.limit_wh - SAMPLE_WH);
  expect(delivered).toBeLessThanOrEqual(s.limit_wh + SAMPLE_WH);
  // Billed by the gateway: never more than proven, than delivered, than paid.
  const proven = s.delivered_wh ?? 0;
  expect(proven).toBeLessThanOrEqual(delivered);
  expect(s.cost ?? 0).toBeLessThanOrEqual(Math.floor((proven * PRICE_PER_KWH) / 1000));
  expect(s.cost ?? 0).toBeLessThanOrEqual(s.amount);
  expect(s.cost ?? 0).toBe(0 - moved(s.id));
  expect(verifyLedger(t.gw.db).checks.filter((c) => c.violations.length > 0)).toEqual([]);
}

const isRefusal = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && 'rpcErrorCode' in error;

describe('a 2.1 simulator through the gateway', () => {
  it('boots on ocpp2.1, charges a paid app session, is stopped at the paid energy and settles', async () => {
    const { cp, warnings } = await station('CP-21');
    try {
      const info = t.gw.db
        .prepare('SELECT protocol FROM charger_info WHERE charger_id = ?')
        .get('CP-21') as { protocol: string };
      expect(info.protocol).toBe('ocpp2.1');
      const { s, delivered, reason } = await paidSession(cp, 'CP-21');
      // The gateway's stop (Remote), or the station's own at a limit the gateway handed it.
      expect(['Remote', 'EnergyLimitReached']).toContain(reason);
      expect(s.stop_line).toBe(reason === 'Remote' ? 'paid_energy' : 'station_limit');
      assertPaidAndSettled(s, delivered);
      expect(warnings.filter(isRefusal)).toEqual([]);
    } finally {
      await cp.disconnect();
    }
  });

  it('limit-ignored: the station never enforces a limit, the gateway stops it within one sample', async () => {
    const { cp, warnings } = await station('CP-21-IGN', 'limit-ignored');
    try {
      const { s, delivered, reason } = await paidSession(cp, 'CP-21-IGN');
      expect(reason).toBe('Remote');
      expect(s.stop_line).toBe('paid_energy');
      assertPaidAndSettled(s, delivered);
      expect(warnings.filter(isRefusal)).toEqual([]);
    } finally {
      await cp.disconnect();
    }
  });
});
