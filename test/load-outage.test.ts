import { afterEach, describe, expect, it } from 'vitest';
import { bearer } from './helpers/http.js';
import { rawPowerSite, sessionOf as of } from './helpers/raw-power-site.js';
import { RAW_PROTOCOLS } from './helpers/raw-stations.js';
import { waitUntil } from './helpers/wait.js';

/**
 * Load management through a charger's outage, raw frames over real sockets on a 30 kW site of
 * 22 kW DC connectors: what an offline charger is counted at is what it is allocated, and the
 * readings it replays on its return are judged against the profile that held when they were
 * measured. The gateway's clock (the test's ManualClock) is moved instead of sleeping; the
 * stations stamp their frames on it.
 */

describe.each(RAW_PROTOCOLS)('load management through an outage: $name', (protocol) => {
  const { close, site, station, charge, reading, power } = rawPowerSite(protocol);
  afterEach(close);

  it('an offline charger is allocated what it is counted at: a new session gets what is really left, not 0 W', async () => {
    // B and C take no less than 5 kW: with A alone at 22 kW, the 8 kW left is 4 kW each, so
    // their idle defaults are 0 W.
    const gw = await site({ 'LO-A': undefined, 'LO-B': 5, 'LO-C': 5 });
    const a = await station(gw, 'LO-A');
    await station(gw, 'LO-C');
    const b = await station(gw, 'LO-B');
    await charge(gw, a, 'LO-A');
    await waitUntil(
      async () => of(await power(gw), 'LO-A')?.confirmedKw === 22,
      5000,
      'A at 22 kW',
    );
    // A drops off the network: it keeps its 22 kW profile (OCPP: a TxProfile holds offline).
    await a.close();
    await waitUntil(() => !gw.gw.chargers.isOnline('LO-A'), 5000, 'A offline');
    const { sessionId, token } = await charge(gw, b, 'LO-B');
    // 8 kW is left beside A's 22: B gets it. Allocating A its 15 kW share while counting it at
    // 22 held B's raise to 15 kW back for ever, at its 0 W default.
    await waitUntil(async () => of(await power(gw), 'LO-B')?.confirmedKw === 8, 5000, 'B at 8 kW');
    expect(of(await power(gw), 'LO-A')).toMatchObject({ allocatedKw: 22, confirmedKw: 22 });
    const driver = await fetch(`${gw.gw.url}/v1/sessions/${sessionId}`, { headers: bearer(token) });
    expect(await driver.json()).toMatchObject({ power: { allocatedKw: 8, waiting: false } });
  });

  it("an offline charger's idle connector is counted at the default it holds: the session beside it gets the rest", async () => {
    const gw = await site({ 'LO-A': undefined, 'LO-B': undefined, 'LO-C': undefined });
    const defaults: number[] = [];
    const a = await station(gw, 'LO-A', (s) =>
      s.cp.handle('SetChargingProfile', async ({ params }) => {
        const p = params as Record<string, { chargingSchedule: unknown }>;
        const profile = p.csChargingProfiles ?? p.chargingProfile;
        const schedule = [profile?.chargingSchedule].flat()[0] as {
          chargingSchedulePeriod: { limit: number }[];
        };
        defaults.push(schedule.chargingSchedulePeriod[0]?.limit ?? -1);
        return { status: 'Accepted' };
      }),
    );
    await waitUntil(() => defaults.includes(10_000), 5000, "A's safe default");
    const b = await station(gw, 'LO-B');
    await station(gw, 'LO-C');
    // A, idle, drops off holding its 10 kW default; B's session may have the 20 kW left.
    await a.close();
    await waitUntil(() => !gw.gw.chargers.isOnline('LO-A'), 5000, 'A offline');
    await charge(gw, b, 'LO-B');
    await waitUntil(
      async () => of(await power(gw), 'LO-B')?.confirmedKw === 20,
      5000,
      'B at 20 kW',
    );
  });

  it('readings replayed after an outage are judged against the profile that held when they were measured', async () => {
    const gw = await site({ 'LO-A': undefined, 'LO-B': undefined });
    const a = await station(gw, 'LO-A');
    const b = await station(gw, 'LO-B');
    const { tx } = await charge(gw, a, 'LO-A');
    await waitUntil(
      async () => of(await power(gw), 'LO-A')?.confirmedKw === 22,
      5000,
      'A at 22 kW',
    );
    gw.clock.advance(20_000);
    let wh = 10_000;
    await reading(gw, a, tx, (wh += 6), 22_000);
    // Eight seconds off the network; B starts meanwhile.
    await a.close();
    await waitUntil(() => !gw.gw.chargers.isOnline('LO-A'), 5000, 'A offline');
    await charge(gw, b, 'LO-B');
    gw.clock.advance(8_000);
    // Back: A is lowered to its 15 kW share before it sends the readings it queued at 22 kW.
    await a.reconnect();
    await waitUntil(
      async () => {
        const now = await power(gw);
        return of(now, 'LO-A')?.confirmedKw === 15 && of(now, 'LO-B')?.confirmedKw === 15;
      },
      5000,
      'A lowered to 15 kW, B raised to it',
    );
    // Queued at 22 kW while off the network, sent now without an offline flag: the ones stamped
    // within the last 5 s are on time for the charger's clock estimate and arrive as live readings
    // (src/ocpp/charger-state/charger-clocks.ts), all measured before A took its lower profile.
    for (let k = 8; k >= 1; k--) await reading(gw, a, tx, (wh += 6), 22_000, -k * 1000);
    await reading(gw, a, tx, (wh += 4), 15_000);
    await new Promise((r) => setTimeout(r, 200));
    const now = await power(gw);
    expect(of(now, 'LO-A')).toMatchObject({ state: 'allocated', allocatedKw: 15 });
    expect(of(now, 'LO-B')).toMatchObject({ state: 'allocated', allocatedKw: 15 });
    expect(gw.logLines.filter((l) => l.includes('draws past its charging profile'))).toEqual([]);
  });
});
