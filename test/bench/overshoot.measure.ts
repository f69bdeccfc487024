import { cpus, loadavg, totalmem } from 'node:os';
import { expect, it } from 'vitest';
import type { VehicleSpec } from '../../simulators/shared/simulated-charge-point.js';
import { API_KEY, DRIVERS, startTestGateway } from '../helpers/gateway.js';
import { mintToken, startSession } from '../helpers/http.js';
import { PROTOCOLS, type ProtocolUnderTest } from '../helpers/simulated-charger.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Paid-energy overshoot and undershoot (npm run measure:overshoot): real gateway, real simulators
 * over real sockets, the paid-energy stop as it runs on a site. Prints a table; asserts only the
 * money rule (overshoot is never debited). The simulators run faster than real time, so each
 * wall-clock millisecond of stop latency is `timeFactor` simulated ms of energy: the stop lead is
 * scaled the same way (250 ms on a real site = 250 / timeFactor ms here).
 *
 * OVERSHOOT_RUNS (default 2) sessions per protocol, power and sample interval (at most 5: one
 * wallet pays for them).
 */
interface Profile {
  name: string;
  chargerId: string;
  maxPowerW: number;
  amount: number;
  /** micro-NGN per Wh of the charger's tariff in the test config. */
  microNgnPerWh: number;
  timeFactor: number;
  vehicle: VehicleSpec;
}

const PROFILES: Profile[] = [
  {
    name: 'AC 7.4 kW',
    chargerId: 'CP-AC',
    maxPowerW: 7_400,
    amount: 2_000, // 8,000 Wh at 250 NGN/kWh
    microNgnPerWh: 250_000,
    timeFactor: 300,
    vehicle: { model: 'BYD Atto 3', batteryKwh: 60.5, socPercent: 20, maxPowerW: 11_000 },
  },
  {
    name: 'DC 150 kW',
    chargerId: 'CP-1',
    maxPowerW: 150_000,
    amount: 10_000, // 24,242 Wh at 412.5 NGN/kWh
    microNgnPerWh: 412_500,
    timeFactor: 60,
    vehicle: { model: 'Hyundai Ioniq 5', batteryKwh: 77.4, socPercent: 10, maxPowerW: 220_000 },
  },
];
const INTERVALS_S = [10, 30, 60];
const RUNS = Number(process.env.OVERSHOOT_RUNS ?? 2);
const REAL_STOP_LEAD_MS = 250;

interface Result {
  protocol: string;
  profile: string;
  intervalS: number;
  limitWh: number;
  deliveredWh: number;
  cost: number;
  credited: number;
}

it('measures the paid-energy overshoot', async () => {
  const results: Result[] = [];
  try {
    for (const profile of PROFILES)
      for (const intervalS of INTERVALS_S)
        for (const protocol of PROTOCOLS) await measure(profile, intervalS, protocol, results);
  } finally {
    print(results);
  }
});

/** RUNS sessions on a fresh gateway (a fresh wallet: the test driver's 50,000 NGN covers them). */
async function measure(
  profile: Profile,
  intervalS: number,
  protocol: ProtocolUnderTest,
  results: Result[],
): Promise<void> {
  const t = await startTestGateway({
    ocpp: { meterSampleIntervalSeconds: intervalS, callTimeoutSeconds: 5 },
    sessions: {
      startTimeoutSeconds: 30,
      maxAmount: 1_000_000,
      stopLeadMilliseconds: Math.round(REAL_STOP_LEAD_MS / profile.timeFactor),
    },
    log: { level: 'warn' },
  });
  try {
    for (let run = 0; run < RUNS; run++) {
      const cp = await protocol.connect(t.gw.ocppUrl, profile.chargerId, {
        connectors: 1,
        maxPowerW: profile.maxPowerW,
        timeFactor: profile.timeFactor,
      });
      try {
        await waitUntil(
          () =>
            t.gw.db
              .prepare('SELECT 1 FROM charger_info WHERE charger_id = ? AND booted_at IS NOT NULL')
              .get(profile.chargerId),
          5000,
          'boot',
        );
        // The sample interval is configured after boot: give the charger a moment to take it.
        await new Promise((r) => setTimeout(r, 200));
        await cp.plugIn(1, profile.vehicle);
        const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
        const res = await startSession(
          t.gw.url,
          token,
          { chargerId: profile.chargerId, connectorId: '1', driverEmail: DRIVERS.ada.email },
          profile.amount,
        );
        expect(res.status).toBe(200);
        const { sessionId } = res.body as { sessionId: string };
        const row = await waitUntil(
          () =>
            t.gw.db
              .prepare(
                "SELECT limit_wh, delivered_wh, cost, credited FROM sessions WHERE id = ? AND state = 'settled'",
              )
              .get(sessionId) as
              | { limit_wh: number; delivered_wh: number; cost: number; credited: number }
              | undefined,
          10 * 60_000,
          'settlement',
        );
        // The money rule: energy beyond what was paid is never debited.
        expect(row.cost).toBeLessThanOrEqual(profile.amount);
        expect(row.credited).toBe(profile.amount - row.cost);
        expect(row.cost).toBe(
          Math.min(profile.amount, Math.floor((row.delivered_wh * profile.microNgnPerWh) / 1e6)),
        );
        results.push({
          protocol: protocol.name,
          profile: profile.name,
          intervalS,
          limitWh: row.limit_wh,
          deliveredWh: row.delivered_wh,
          cost: row.cost,
          credited: row.credited,
        });
        await cp.unplug(1);
      } finally {
        await cp.disconnect();
      }
    }
  } finally {
    await t.close();
  }
}

/** One row per protocol, charger and interval: every run's delivered energy, the worst each way. */
function print(results: Result[]): void {
  const pct = (wh: number, of: number) => `${((100 * wh) / of).toFixed(2)} %`;
  const lines = [
    `Paid-energy overshoot, ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ` +
      `${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, load ${loadavg()[0]?.toFixed(1)}; ` +
      `stop lead ${REAL_STOP_LEAD_MS} ms (real-time equivalent), ${RUNS} run(s) each`,
    '| Protocol | Charger | Meter interval | Paid Wh | Delivered Wh | Worst over | Worst under | Debited beyond paid |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const groups = new Map<string, Result[]>();
  for (const r of results) {
    const key = `${r.protocol} | ${r.profile} | ${r.intervalS} s`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  for (const [key, rs] of groups) {
    const limit = (rs[0] as Result).limitWh;
    const over = Math.max(0, ...rs.map((r) => r.deliveredWh - limit));
    const under = Math.max(0, ...rs.map((r) => limit - r.deliveredWh));
    lines.push(
      `| ${key} | ${limit} | ${rs.map((r) => r.deliveredWh).join(' / ')} | ` +
        `${over} Wh (${pct(over, limit)}) | ${under} Wh (${pct(under, limit)}) | 0 NGN |`,
    );
  }
  console.log(lines.join('\n'));
}
