import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { verifyLedger } from '../../src/cli/offline/verify-ledger.js';
import type { GatewayConfigInput } from '../../src/config/schema.js';
import { API_KEY, DRIVERS, startTestGateway, type TestGateway } from './gateway.js';
import { mintToken, startSession } from './http.js';
import type { RawProtocol, RawStation, StationTx } from './raw-stations.js';
import { waitUntil } from './wait.js';

/**
 * A gateway and raw stations for session tests written once for both protocols
 * (misbehaving-chargers, field-sessions): a paid session on CP-1 connector 1, and the checks
 * every case ends with.
 */

// 1,000 NGN at 412.5 NGN/kWh pays for 2,424 Wh; every transaction starts at register 10,000 Wh.
export const AMOUNT = 1_000;
export const LIMIT_WH = 2_424;
export const PRICE = 412_500; // micro-NGN per Wh
export const cost = (wh: number) => Math.min(AMOUNT, Math.floor((wh * PRICE) / 1_000_000));
export const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000).toISOString();
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Samples a register 100 Wh higher every 100 ms, from `fromWh`, until the gateway stops the
 * transaction or the register reaches `untilWh`; returns the last register sent.
 */
export async function chargeUntilStopped(
  station: RawStation,
  tx: StationTx,
  fromWh: number,
  untilWh: number,
): Promise<number> {
  let wh = fromWh;
  while (station.stops.length === 0 && wh < untilWh) {
    await sleep(100);
    wh += 100;
    await station.send(station.sample(tx, wh));
  }
  return wh;
}

interface SessionRow {
  state: string;
  delivered_wh: number | null;
  cost: number | null;
  credited: number | null;
  end_reason: string | null;
  last_meter_wh: number | null;
  ended_at: string | null;
}

/** The session timings of these tests: stops retried and given up on in fractions of a second. */
export const HARNESS_SESSIONS = {
  startTimeoutSeconds: 5,
  maxAmount: 1_000_000,
  stopLeadMilliseconds: 0,
  stopRetrySeconds: 0.05,
  stopGraceSeconds: 0.3,
};

export function harness(
  sessions: Record<string, number>,
  overrides: Partial<GatewayConfigInput> = {},
) {
  let t: TestGateway;
  const stations: RawStation[] = [];
  beforeAll(async () => {
    t = await startTestGateway({
      sessions: { ...HARNESS_SESSIONS, ...sessions },
      ...overrides,
    });
  });
  afterEach(async () => {
    await Promise.all(stations.splice(0).map((s) => s.close()));
  });
  afterAll(async () => {
    await t.close();
  });

  const h = {
    get t() {
      return t;
    },
    /** A station the test opened itself, closed after the test as the harness's own are. */
    track(station: RawStation) {
      stations.push(station);
    },
    /** A booted raw station on CP-1 with a paid session on connector 1, remote start accepted. */
    async paidSession(protocol: RawProtocol) {
      const station = await protocol.connect(t.gw.ocppUrl, 'CP-1');
      stations.push(station);
      await station.boot();
      return { station, sessionId: await h.appSession() };
    },
    /** Ada's app session on CP-1 connector 1, paid AMOUNT: its id (the remote start has gone). */
    async appSession(): Promise<string> {
      const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
      const res = await startSession(
        t.gw.url,
        token,
        { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email },
        AMOUNT,
      );
      expect(res.status).toBe(200);
      return (res.body as { sessionId: string }).sessionId;
    },
    session: (id: string) =>
      t.gw.db.prepare('SELECT * FROM sessions WHERE id = ?').get(id) as SessionRow,
    settled(id: string) {
      return waitUntil(
        () => (h.session(id).state === 'settled' ? h.session(id) : undefined),
        5000,
        'settlement',
      );
    },
    /** One outcome in the ledger, at most the debit charged, and every invariant holds. */
    settledOnce(id: string, deliveredWh: number) {
      const s = h.session(id);
      expect(s).toMatchObject({
        state: 'settled',
        delivered_wh: deliveredWh,
        cost: cost(deliveredWh),
        credited: AMOUNT - cost(deliveredWh),
      });
      const outcomes = t.gw.db
        .prepare(
          "SELECT count(*) AS n FROM ledger_entries WHERE session_id = ? AND kind IN ('session_credit', 'session_refund')",
        )
        .get(id) as { n: number };
      expect(outcomes.n).toBe(1);
      const report = verifyLedger(t.gw.db);
      expect(report.checks.filter((c) => c.violations.length > 0)).toEqual([]);
    },
    chargingEvents: (id: string) =>
      (
        t.gw.db.prepare("SELECT payload FROM outbox WHERE topic = 'sessions'").all() as {
          payload: string;
        }[]
      )
        .map((r) => JSON.parse(r.payload) as { sessionId: string; state: string })
        .filter((e) => e.sessionId === id && e.state === 'charging').length,
  };
  return h;
}
