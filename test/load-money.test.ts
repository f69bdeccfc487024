import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LimitWatch } from '../src/charging/limit-watch.js';
import { ReportingWatch } from './helpers/reporting-watch.js';
import { verifyLedger } from '../src/cli/offline/verify-ledger.js';
import { ChargePoint16 } from '../simulators/ocpp16/charge-point.js';
import { ChargePoint201 } from '../simulators/ocpp201/charge-point.js';
import type { ChargePointOptions } from '../simulators/shared/simulated-charge-point.js';
import {
  API_KEY,
  CHARGER_PASSWORD,
  DRIVERS,
  PASSWORD_HASH,
  startTestGateway,
} from './helpers/gateway.js';
import { mintToken, startSession } from './helpers/http.js';
import { IONIQ, type SimulatedChargePoint } from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';

describe('paid-energy stop under a site power allowance', () => {
  let fired: string[];
  let ceiling: number | null;
  let watch: LimitWatch;
  beforeEach(() => {
    vi.useFakeTimers();
    fired = [];
    ceiling = null;
    watch = new ReportingWatch({
      leadMs: 100,
      onLimit: (id) => fired.push(id),
      ceilingW: () => ceiling,
    });
  });
  afterEach(() => {
    watch.endAll();
    vi.useRealTimers();
  });

  it('plans at the allowance when it is below the measured rate (no early stop on a stale rate)', () => {
    watch.begin('s', 3000, 0, 0);
    watch.sample('s', 1000, 10_000); // measured 0.1 Wh/ms (360 kW): due in 19,900 ms
    ceiling = 36_000; // the site lowered it to 36 kW = 0.01 Wh/ms: 2000 Wh take 200,000 ms
    watch.ceilingChanged('s', 10_000);
    vi.advanceTimersByTime(19_900);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(199_900 - 19_900 - 1);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['s']);
  });

  it('counts the time since the last reading when the allowance changes between samples', () => {
    watch.begin('s', 3000, 0, 0);
    watch.sample('s', 1000, 10_000);
    ceiling = 36_000;
    watch.ceilingChanged('s', 15_000); // 5 s after that reading: 200,000 - 5,000 - 100 to go
    vi.advanceTimersByTime(194_899);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['s']);
  });

  /** 360 kW is 0.1 Wh per ms. */
  const W_AT_0_1_WH_PER_MS = 360_000;

  it('after a lower, plans at the new ceiling until two readings measure the rate under it', () => {
    watch.begin('s', 3000, 0, 0);
    watch.sample('s', 1000, 10_000); // 0.1 Wh/ms: due at 20,000 ms
    ceiling = W_AT_0_1_WH_PER_MS / 2;
    watch.ceilingChanged('s', 10_000); // 0.05 Wh/ms: 2,000 Wh to go is 40 s
    vi.advanceTimersByTime(39_899);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['s']);
  });

  it('after a raise, plans at the new ceiling, not on the slower rate measured before it', () => {
    ceiling = W_AT_0_1_WH_PER_MS / 2;
    watch.begin('s', 3000, 0, 0);
    watch.ceilingChanged('s', 0);
    watch.sample('s', 500, 10_000);
    watch.sample('s', 1000, 20_000); // 0.05 Wh/ms measured under the ceiling
    ceiling = W_AT_0_1_WH_PER_MS;
    watch.ceilingChanged('s', 20_000);
    // 2,000 Wh at 0.1 Wh/ms: 20 s; on the old rate it would be 40 s and overshoot.
    vi.advanceTimersByTime(19_900);
    expect(fired).toEqual(['s']);
  });

  it('once two readings follow the change, what the meter says flows: a little past the ceiling stops on time', () => {
    ceiling = W_AT_0_1_WH_PER_MS;
    watch.begin('s', 4000, 0, 0);
    watch.ceilingChanged('s', 0);
    // The charger draws 2 % past its ceiling (AC at 234.6 V on a 230 V allowance).
    watch.sample('s', 1020, 10_000);
    watch.sample('s', 2040, 20_000); // 0.102 Wh/ms: 1,960 Wh to go is 19,216 ms
    vi.advanceTimersByTime(19_116);
    expect(fired).toEqual(['s']);
  });

  it('an unchanged ceiling confirmed again keeps the measured rate', () => {
    ceiling = W_AT_0_1_WH_PER_MS;
    watch.begin('s', 4000, 0, 0);
    watch.ceilingChanged('s', 0);
    watch.sample('s', 1020, 10_000);
    watch.sample('s', 2040, 20_000);
    watch.ceilingChanged('s', 20_000); // the same allowance sent again
    vi.advanceTimersByTime(19_116);
    expect(fired).toEqual(['s']);
  });

  it('a change right after our clock stepped forward does not stop the session early', () => {
    ceiling = W_AT_0_1_WH_PER_MS;
    watch.begin('s', 3000, 0, 0);
    watch.ceilingChanged('s', 0);
    watch.sample('s', 500, 5_000);
    watch.sample('s', 1000, 10_000);
    ceiling = W_AT_0_1_WH_PER_MS / 2;
    // Our clock jumped 2 minutes: the time since the last reading counts at most one interval.
    watch.ceilingChanged('s', 130_000);
    // 2,000 Wh at 0.05 Wh/ms is 40 s, less the 5 s interval and the lead.
    vi.advanceTimersByTime(34_899);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['s']);
  });

  it('keeps the measured rate when the allowance is above it', () => {
    ceiling = 1_000_000;
    watch.begin('s', 3000, 0, 0);
    watch.sample('s', 1000, 10_000);
    vi.advanceTimersByTime(19_900);
    expect(fired).toEqual(['s']);
  });

  it('plans nothing while the session waits at 0 W, and plans again when it gets power', () => {
    watch.begin('s', 3000, 0, 0);
    watch.sample('s', 1000, 10_000);
    ceiling = 0;
    watch.ceilingChanged('s', 10_000);
    vi.advanceTimersByTime(1_000_000);
    expect(fired).toEqual([]);
    ceiling = 360_000;
    watch.ceilingChanged('s', 1_010_000);
    vi.advanceTimersByTime(0);
    expect(fired).toEqual(['s']); // planned from the reading 1,000,000 ms ago: due at once
  });
});

const PROTOCOLS = [
  {
    name: 'OCPP 1.6J',
    make: (o: ChargePointOptions): SimulatedChargePoint => new ChargePoint16(o),
  },
  {
    name: 'OCPP 2.0.1',
    make: (o: ChargePointOptions): SimulatedChargePoint => new ChargePoint201(o),
  },
];

describe.each(PROTOCOLS)('money under a site limit: $name', (protocol) => {
  it('a session slowed by the site is billed for the energy delivered, nothing more', async () => {
    const t = await startTestGateway({
      chargers: [
        {
          id: 'LM-M',
          passwordHash: PASSWORD_HASH,
          connectors: [{ id: '1', tariff: 'dc', type: 'DC', maxPowerKw: 150 }],
        },
      ],
      power: { limitKw: 40 },
      ocpp: { meterSampleIntervalSeconds: 1, callTimeoutSeconds: 2 },
      sessions: { startTimeoutSeconds: 5, maxAmount: 1_000_000, stopLeadMilliseconds: 0 },
    });
    const cp = protocol.make({
      url: t.gw.ocppUrl,
      identity: 'LM-M',
      password: CHARGER_PASSWORD,
      connectors: 1,
      maxPowerW: 150_000,
      timeFactor: 1,
      personality: ['obeys-profile'],
    });
    try {
      await cp.connect();
      await cp.plugIn(1, IONIQ);
      const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
      const res = await startSession(
        t.gw.url,
        token,
        { chargerId: 'LM-M', connectorId: '1', driverEmail: DRIVERS.ada.email },
        5_000,
      );
      expect(res.status).toBe(200);
      const { sessionId } = res.body as { sessionId: string };
      // The charger holds the site's 40 kW, not its own 150 kW.
      const sample = await cp.waitFor('meterValues', (m) => m.powerW > 0, 10_000);
      expect(sample.powerW).toBeLessThanOrEqual(40_000);
      await waitUntil(() => cp.state(1).deliveredWh >= 20, 10_000, 'some energy');
      await cp.interrupt(1);
      const row = await waitUntil(
        () =>
          t.gw.db
            .prepare(
              "SELECT delivered_wh, cost, credited, amount, meter_start_wh AS start, price_micro_ngn_per_wh AS price FROM sessions WHERE id = ? AND state = 'settled'",
            )
            .get(sessionId) as
            | {
                delivered_wh: number;
                cost: number;
                credited: number;
                amount: number;
                start: number;
                price: number;
              }
            | undefined,
        10_000,
        'settled',
      );
      // Billed on the register the charger reported at its stop: what the simulator delivered.
      expect(row.delivered_wh).toBeGreaterThanOrEqual(20);
      expect(row.delivered_wh).toBe(Math.floor(cp.state(1).registerWh) - row.start);
      expect(row.cost).toBe(Math.floor((row.delivered_wh * row.price) / 1_000_000));
      expect(row.cost + row.credited).toBe(row.amount);
      expect(verifyLedger(t.gw.db).ok).toBe(true);
    } finally {
      await cp.disconnect();
      await t.close();
    }
  });
});
