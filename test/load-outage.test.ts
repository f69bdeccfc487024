import { afterEach, describe, expect, it } from 'vitest';
import type { GatewayConfigInput } from '../src/config/schema.js';
import {
  API_KEY,
  DRIVERS,
  PASSWORD_HASH,
  startTestGateway,
  type TestGateway,
} from './helpers/gateway.js';
import { bearer, mintToken, startSession } from './helpers/http.js';
import { createOperator, op } from './helpers/operator.js';
import {
  raw16,
  RAW_PROTOCOLS,
  type Frame,
  type RawStation,
  type StationTx,
} from './helpers/raw-stations.js';
import { waitUntil } from './helpers/wait.js';

/**
 * Load management through a charger's outage, raw frames over real sockets on a 30 kW site of
 * 22 kW DC connectors: what an offline charger is counted at is what it is allocated, and the
 * readings it replays on its return are judged against the profile that held when they were
 * measured. The gateway's clock (the test's ManualClock) is moved instead of sleeping; the
 * stations stamp their frames on it.
 */

interface SitePower {
  sessions: {
    chargerId: string;
    state: string;
    allocatedKw: number;
    confirmedKw: number | null;
  }[];
}

const connector = (minPowerKw?: number) => ({
  id: '1',
  tariff: 'dc',
  type: 'DC' as const,
  maxPowerKw: 22,
  ...(minPowerKw !== undefined && { minPowerKw }),
});

describe.each(RAW_PROTOCOLS)('load management through an outage: $name', (protocol) => {
  let t: TestGateway | undefined;
  const stations: RawStation[] = [];
  afterEach(async () => {
    await Promise.all(stations.splice(0).map((s) => s.close()));
    await t?.close();
    t = undefined;
  });

  async function site(chargers: Record<string, number | undefined>) {
    const list: GatewayConfigInput['chargers'] = Object.entries(chargers).map(([id, min]) => ({
      id,
      passwordHash: PASSWORD_HASH,
      connectors: [connector(min)],
    }));
    t = await startTestGateway({ chargers: list, power: { limitKw: 30 } });
    return t;
  }

  const stamp = (gw: TestGateway, msFromNow = 0) =>
    new Date(gw.clock.now() + msFromNow).toISOString();

  async function station(gw: TestGateway, id: string, onConnect?: (s: RawStation) => void) {
    const s = await protocol.connect(gw.gw.ocppUrl, id);
    stations.push(s);
    onConnect?.(s);
    await s.reboot();
    await s.send(s.status(1, 'Available'));
    return s;
  }

  async function charge(gw: TestGateway, s: RawStation, id: string) {
    const token = await mintToken(gw.gw.url, API_KEY, DRIVERS.ada.email);
    const target = { chargerId: id, connectorId: '1', driverEmail: DRIVERS.ada.email };
    const res = await startSession(gw.gw.url, token, target, 5_000);
    expect(res.status).toBe(200);
    const { tx } = await s.start(10_000, { timestamp: stamp(gw) });
    return { tx, token, sessionId: (res.body as { sessionId: string }).sessionId };
  }

  /** A live sample with its power, stamped on the gateway's clock. */
  function reading(gw: TestGateway, s: RawStation, tx: StationTx, wh: number, w: number, at = 0) {
    const frame: Frame = s.sample(tx, wh, { timestamp: stamp(gw, at) });
    const meterValue = frame.params.meterValue as { sampledValue: unknown[] }[];
    meterValue[0]?.sampledValue.push(
      protocol === raw16
        ? { measurand: 'Power.Active.Import', value: String(w), unit: 'W' }
        : { measurand: 'Power.Active.Import', value: w, unitOfMeasure: { unit: 'W' } },
    );
    return s.send(frame);
  }

  const viewers = new WeakMap<TestGateway, string>();
  async function power(gw: TestGateway) {
    const viewer = viewers.get(gw) ?? createOperator(gw.gw.db, 'viewer', 'viewer');
    viewers.set(gw, viewer);
    const res = await op(gw.gw.operatorUrl, viewer, 'GET', '/site/power');
    expect(res.status).toBe(200);
    return (res.body as SitePower).sessions;
  }
  const of = (sessions: SitePower['sessions'], chargerId: string) =>
    sessions.find((s) => s.chargerId === chargerId);

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
