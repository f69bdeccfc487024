import { afterEach, describe, expect, it } from 'vitest';
import type { GatewayConfigInput } from '../src/config/schema.js';
import {
  API_KEY,
  CHARGER_PASSWORD,
  DRIVERS,
  PASSWORD_HASH,
  startTestGateway,
  type TestGateway,
} from './helpers/gateway.js';
import { mintToken, quote, startSession } from './helpers/http.js';
import { createOperator, op } from './helpers/operator.js';
import { ChargePoint16 } from '../simulators/ocpp16/charge-point.js';
import { ChargePoint201 } from '../simulators/ocpp201/charge-point.js';
import type { ChargePointOptions } from '../simulators/shared/simulated-charge-point.js';
import { IONIQ, type SimulatedChargePoint } from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';

/** A SetChargingProfile the gateway sent, or the charger's answer to it, in the order seen. */
interface ProfileFrame {
  kind: 'call' | 'reply';
  chargerId: string;
  messageId: string;
  connectorId?: number;
  purpose?: string;
  limitW?: number;
  status?: string;
}

const DC_KW = 22;
const chargerConfig = (id: string, connectors: number): GatewayConfigInput['chargers'][number] => ({
  id,
  passwordHash: PASSWORD_HASH,
  connectors: Array.from({ length: connectors }, (_, i) => ({
    id: String(i + 1),
    tariff: 'dc',
    type: 'DC' as const,
    maxPowerKw: DC_KW,
  })),
});

/** The schedule's first limit, in W (the site's connectors are DC: W on the wire). */
function firstLimit(payload: Record<string, unknown>): number | undefined {
  const profile = (payload.csChargingProfiles ?? payload.chargingProfile) as
    { chargingSchedule: unknown } | undefined;
  if (!profile) return undefined;
  const schedule = (
    Array.isArray(profile.chargingSchedule) ? profile.chargingSchedule[0] : profile.chargingSchedule
  ) as { chargingRateUnit: string; chargingSchedulePeriod: { limit: number }[] };
  expect(schedule.chargingRateUnit).toBe('W');
  return schedule.chargingSchedulePeriod[0]?.limit;
}

/** Records every SetChargingProfile call and its reply on the simulator's wire, in order. */
function recordProfiles(cp: SimulatedChargePoint, log: ProfileFrame[]): void {
  const pending = new Set<string>();
  cp.on('frame', ({ direction, message }) => {
    const frame = JSON.parse(message) as unknown[];
    if (direction === 'in' && frame[0] === 2 && frame[2] === 'SetChargingProfile') {
      const payload = frame[3] as Record<string, unknown>;
      const profile = (payload.csChargingProfiles ?? payload.chargingProfile) as {
        chargingProfilePurpose: string;
      };
      pending.add(String(frame[1]));
      log.push({
        kind: 'call',
        chargerId: cp.identity,
        messageId: String(frame[1]),
        connectorId: Number(payload.connectorId ?? payload.evseId),
        purpose: profile.chargingProfilePurpose,
        limitW: firstLimit(payload),
      });
    }
    if (direction === 'out' && frame[0] === 3 && pending.delete(String(frame[1]))) {
      log.push({
        kind: 'reply',
        chargerId: cp.identity,
        messageId: String(frame[1]),
        status: (frame[2] as { status: string }).status,
      });
    }
  });
}

/** Built, not connected: the recorder must hear the profiles sent right after the boot. */
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

describe.each(PROTOCOLS)('load manager over real sockets: $name', (protocol) => {
  let t: TestGateway | undefined;
  let debugLog: ProfileFrame[] = [];
  const chargers: SimulatedChargePoint[] = [];
  afterEach(async (ctx) => {
    if (process.env.DEBUG_LM && ctx.task.result?.state === 'fail') {
      console.log(JSON.stringify(debugLog));
      console.log(t?.logLines.filter((l) => /load|power|profile|Profile/.test(l)).join('\n'));
    }
    await Promise.all(chargers.splice(0).map((c) => c.disconnect()));
    await t?.close();
    t = undefined;
  });

  async function site(limitKw: number, ids: Record<string, number>) {
    t = await startTestGateway({
      chargers: Object.entries(ids).map(([id, n]) => chargerConfig(id, n)),
      power: { limitKw },
      sessions: { startTimeoutSeconds: 5, maxAmount: 1_000_000, stopLeadMilliseconds: 0 },
    });
    return t;
  }

  async function charger(
    gw: TestGateway,
    id: string,
    connectors: number,
    log: ProfileFrame[],
    personality: string[] = ['obeys-profile'],
  ) {
    const cp = protocol.make({
      url: gw.gw.ocppUrl,
      identity: id,
      password: CHARGER_PASSWORD,
      connectors,
      maxPowerW: DC_KW * 1000,
      timeFactor: 1,
      personality,
      reconnect: true,
    });
    recordProfiles(cp, log);
    chargers.push(cp);
    await cp.connect();
    await waitUntil(
      () =>
        gw.gw.db
          .prepare('SELECT 1 FROM charger_info WHERE charger_id = ? AND booted_at IS NOT NULL')
          .get(id),
      5000,
      `${id} booted`,
    );
    return cp;
  }

  async function charge(gw: TestGateway, cp: SimulatedChargePoint, connector: number) {
    await cp.plugIn(connector, IONIQ);
    const token = await mintToken(gw.gw.url, API_KEY, DRIVERS.ada.email);
    const res = await startSession(
      gw.gw.url,
      token,
      { chargerId: cp.identity, connectorId: String(connector), driverEmail: DRIVERS.ada.email },
      20_000,
    );
    expect(res.status).toBe(200);
    const { sessionId } = res.body as { sessionId: string };
    await waitUntil(() => cp.state(connector).transactionId !== undefined, 10_000, 'transaction');
    return { sessionId, token };
  }

  const accepted = (log: ProfileFrame[], chargerId: string, connectorId: number, limitW: number) =>
    log.findIndex(
      (f, i) =>
        f.kind === 'call' &&
        f.chargerId === chargerId &&
        f.connectorId === connectorId &&
        f.purpose === 'TxProfile' &&
        f.limitW === limitW &&
        log
          .slice(i)
          .some(
            (r) => r.kind === 'reply' && r.messageId === f.messageId && r.status === 'Accepted',
          ),
    );
  const replyOf = (log: ProfileFrame[], callIndex: number) =>
    log.findIndex((f) => f.kind === 'reply' && f.messageId === log[callIndex]?.messageId);

  it('sends the safe default at boot, then lowers before it raises on a start and on limit changes', async () => {
    const gw = await site(30, { 'LM-A': 2, 'LM-B': 1 });
    const log: ProfileFrame[] = (debugLog = []);
    const a = await charger(gw, 'LM-A', 2, log);
    const b = await charger(gw, 'LM-B', 1, log);
    // Three connectors share 30 kW as if all were busy: 10 kW each before any session.
    const defaults = () =>
      new Set(
        log
          .filter(
            (f) => f.kind === 'call' && f.purpose === 'TxDefaultProfile' && f.limitW === 10_000,
          )
          .map((f) => `${f.chargerId}/${f.connectorId}`),
      );
    await waitUntil(() => defaults().size === 3, 5000, 'safe defaults');

    const first = await charge(gw, a, 1);
    await waitUntil(() => accepted(log, 'LM-A', 1, 22_000) >= 0, 5000, 'A1 raised to its max');
    // A quote on LM-B 1 now: a session there would get 15 kW (A's 22 kW comes down to share).
    const quoted = await quote(gw.gw.url, first.token, {
      chargerId: 'LM-B',
      connectorId: '1',
      driverEmail: DRIVERS.ada.email,
    });
    const { energyWh, estimatedMinutes } = quoted.body as {
      energyWh: number;
      estimatedMinutes: number;
    };
    expect(estimatedMinutes).toBe(Math.ceil((energyWh / 15_000) * 60));
    const second = await charge(gw, b, 1);
    await waitUntil(() => accepted(log, 'LM-B', 1, 15_000) >= 0, 5000, 'B1 at its share');
    const lowerA = accepted(log, 'LM-A', 1, 15_000);
    const raiseB = accepted(log, 'LM-B', 1, 15_000);
    expect(lowerA).toBeGreaterThanOrEqual(0);
    // A's lower was answered before B's raise went out.
    expect(replyOf(log, lowerA)).toBeLessThan(raiseB);

    const operator = createOperator(gw.gw.db, 'ops', 'operator');
    const set = await op(gw.gw.operatorUrl, operator, 'PUT', '/site/power/limits/site', {
      limitKw: 20,
      reason: 'generator hours',
    });
    expect(set.status).toBe(200);
    await waitUntil(
      () => accepted(log, 'LM-A', 1, 10_000) >= 0 && accepted(log, 'LM-B', 1, 10_000) >= 0,
      5000,
      'both lowered to 10 kW',
    );
    const power = await op(gw.gw.operatorUrl, operator, 'GET', '/site/power');
    expect(power.status).toBe(200);
    expect(power.body).toMatchObject({
      policy: 'equal',
      nodes: [{ nodeId: 'site', limitKw: 20, source: 'operator', allocatedKw: 20 }],
    });
    const driverView = await fetch(`${gw.gw.url}/v1/sessions/${first.sessionId}`, {
      headers: { authorization: `Bearer ${first.token}` },
    });
    expect(await driverView.json()).toMatchObject({ power: { allocatedKw: 10, waiting: false } });

    const before = log.length;
    const cleared = await op(gw.gw.operatorUrl, operator, 'DELETE', '/site/power/limits/site');
    expect(cleared.status).toBe(200);
    await waitUntil(
      () =>
        log.slice(before).filter((f) => f.kind === 'reply' && f.status === 'Accepted').length >= 2,
      5000,
      'both raised again',
    );
    const raised = log.slice(before).filter((f) => f.kind === 'call');
    expect(raised.map((f) => f.limitW)).toEqual([15_000, 15_000]);
    void second;
  });

  it('a refusing charger is counted at its max; a restart sends the safe default and the profile again', async () => {
    const gw = await site(30, { 'LM-A': 2, 'LM-R': 1 });
    const log: ProfileFrame[] = (debugLog = []);
    const a = await charger(gw, 'LM-A', 2, log);
    const r = await charger(gw, 'LM-R', 1, log, ['rejects-profiles']);
    await charge(gw, r, 1);
    const { sessionId } = await charge(gw, a, 1);
    // LM-R rejects profiles: it draws up to its 22 kW, so LM-A 1 gets the 8 kW left.
    await waitUntil(() => accepted(log, 'LM-A', 1, 8_000) >= 0, 5000, 'A1 at what is left');
    const operator = createOperator(gw.gw.db, 'ops', 'viewer');
    const power = await op(gw.gw.operatorUrl, operator, 'GET', '/site/power');
    const sessions = (
      power.body as { sessions: { chargerId: string; state: string; allocatedKw: number }[] }
    ).sessions;
    expect(sessions.find((s) => s.chargerId === 'LM-R')).toMatchObject({
      state: 'unmanaged',
      allocatedKw: 22,
    });
    expect(sessions.find((s) => s.chargerId === 'LM-A')).toMatchObject({
      state: 'allocated',
      allocatedKw: 8,
    });

    const before = log.length;
    await gw.restart();
    // Both reconnect on their own; LM-A gets its default (as if all 3 were busy) and its session's profile.
    await waitUntil(
      () =>
        log
          .slice(before)
          .some(
            (f) =>
              f.chargerId === 'LM-A' && f.purpose === 'TxDefaultProfile' && f.limitW === 10_000,
          ) &&
        log
          .slice(before)
          .some((f) => f.chargerId === 'LM-A' && f.purpose === 'TxProfile' && f.limitW === 8_000),
      10_000,
      'profiles again after the restart',
    );
    const after = log.slice(before).filter((f) => f.kind === 'call' && f.chargerId === 'LM-A');
    expect(after.findIndex((f) => f.purpose === 'TxDefaultProfile')).toBeLessThan(
      after.findIndex((f) => f.purpose === 'TxProfile'),
    );
    void sessionId;
  });
});
