import { randomUUID } from 'node:crypto';
import { verifyLedger } from '../../src/cli/offline/verify-ledger.js';
import { API_KEY, DRIVERS } from '../helpers/gateway.js';
import { mintToken, startSession } from '../helpers/http.js';
import type { Frame } from '../helpers/raw-stations.js';
import type { Scenario } from './features.js';
import { startSimGateway, type SimGateway } from './gateway.js';
import { Ev, mainRegister, quantizationWh, sampledValues } from './meter.js';
import { Station } from './station.js';

/** The DC tariff of the test site (micro-NGN per Wh). */
export const PRICE = 412_500;

/** What a run did, in the truth's terms and the gateway's. */
export interface RunResult {
  paidWh: number;
  /** Energy the EV really got (Wh). */
  deliveredWh: number;
  /** The most energy that flowed between two samples the charger sent, rounding included (Wh). */
  sampleWorthWh: number;
  /** Energy delivered when the gateway's first stop reached the charger; null: none did. */
  stoppedAtWh: number | null;
  /** The EV was full (stopped drawing) when the flow ended or the stop came. */
  evStopped: boolean;
  /**
   * The stop reached a charger whose own messages were held back (its link up after a reboot in an
   * outage): the gateway, hearing nothing, could only plan on the rate it last measured.
   */
  stoppedUnheard: boolean;
  /**
   * The most the gateway could have let flow: the paid energy when it crossed while the charger
   * was reachable; else what had flowed by the time it was reachable again.
   */
  stopBoundWh: number;
  state: string;
  billedWh: number | null;
  cost: number | null;
  credited: number | null;
  amount: number;
  ledgerProblems: string[];
  notes: string[];
}

interface Tick {
  atMs: number;
  wh: number;
  /** The charger could be told to stop (online, nothing queued ahead). */
  reachable: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const WAIT_MS = 20_000;

/** One seeded run: a paid session on CP-1 connector 1, driven from the truth to its settlement. */
export async function runScenario(s: Scenario): Promise<RunResult> {
  const paidWh = Math.floor((s.amount * 1_000_000) / PRICE);
  const powerW = (paidWh / s.samplesToPaid) * (3_600_000 / s.intervalMs);
  const maxPowerKw = s.powerBoundFactor === null ? undefined : (powerW * s.powerBoundFactor) / 1000;
  const gw = await startSimGateway(s.kill !== null, maxPowerKw);
  const station = new Station(s.protocol, () => gw.ocppUrl);
  const notes: string[] = [];
  try {
    return await drive(s, gw, station, paidWh, powerW, notes);
  } catch (err) {
    (err as Error).message += `\n  notes: ${notes.join('; ')}`;
    throw err;
  } finally {
    await station.close();
    await gw.close();
  }
}

async function drive(
  s: Scenario,
  gw: SimGateway,
  station: Station,
  paidWh: number,
  powerW: number,
  notes: string[],
): Promise<RunResult> {
  const v16 = s.protocol === 'ocpp1.6';
  let seqNo = 0;
  let clockMs = s.skewMs;
  const stamp = (atMs: number) => new Date(atMs + clockMs).toISOString();

  const boot: Frame = v16
    ? {
        action: 'BootNotification',
        params: { chargePointVendor: 'Acme', chargePointModel: 'DC150' },
      }
    : {
        action: 'BootNotification',
        params: { reason: 'PowerUp', chargingStation: { vendorName: 'Acme', model: 'DC150' } },
      };
  await station.connect();
  await station.send(boot);
  const status = (
    atMs: number,
    state: 'Available' | 'Preparing' | 'Charging' | 'SuspendedEV',
  ): Frame =>
    v16
      ? {
          action: 'StatusNotification',
          params: { connectorId: 1, errorCode: 'NoError', status: state, timestamp: stamp(atMs) },
        }
      : {
          action: 'StatusNotification',
          params: {
            timestamp: stamp(atMs),
            connectorStatus: state === 'Available' ? 'Available' : 'Occupied',
            evseId: 1,
            connectorId: 1,
          },
        };
  await station.send(status(Date.now(), 'Available'));
  await station.send(status(Date.now(), 'Preparing'));
  const token = await mintToken(gw.url, API_KEY, DRIVERS.ada.email);
  const target = { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email };
  const res = await startSession(gw.url, token, target, s.amount);
  if (res.status !== 200)
    throw new Error(`start answered ${res.status} ${JSON.stringify(res.body)}`);
  const sessionId = (res.body as { sessionId: string }).sessionId;
  const remote = station.remoteStarts.at(-1);
  if (!remote) throw new Error('no remote start reached the charger');

  const t0 = Date.now();
  const fullWh = s.evFullShare === null ? Number.POSITIVE_INFINITY : paidWh * s.evFullShare;
  const ev = new Ev(t0, fullWh);
  // The register counts from `baseWh` since the energy `sinceWh` (a reset starts both again).
  let baseWh = s.startRegisterWh;
  let sinceWh = 0;
  const meter = (wh: number, context: string) =>
    sampledValues(s, s.protocol, baseWh, wh - sinceWh, context);
  const event = (
    eventType: string,
    triggerReason: string,
    atMs: number,
    extra: object,
    info: object = {},
  ): Frame => ({
    action: 'TransactionEvent',
    params: {
      eventType,
      timestamp: stamp(atMs),
      triggerReason,
      seqNo: seqNo++,
      ...(!station.online && { offline: true }),
      transactionInfo: { transactionId: txRef, ...info },
      ...extra,
    },
  });

  let txRef: string = randomUUID();
  if (v16) {
    const reply = (await station.send({
      action: 'StartTransaction',
      params: {
        connectorId: 1,
        idTag: remote.idToken,
        meterStart: mainRegister(s, baseWh, 0),
        timestamp: stamp(t0),
      },
    })) as { transactionId: number };
    txRef = String(reply.transactionId);
    await station.send(status(t0, 'Charging'));
  } else {
    await station.send(
      event(
        'Started',
        'RemoteStart',
        t0,
        {
          idToken: { idToken: remote.idToken, type: 'Central' },
          evse: { id: 1, connectorId: 1 },
          meterValue: [{ timestamp: stamp(t0), sampledValue: meter(0, 'Transaction.Begin') }],
        },
        { chargingState: 'Charging', remoteStartId: remote.remoteStartId },
      ),
    );
  }

  const sampleFrame = (atMs: number, wh: number): Frame => {
    const meterValue = [{ timestamp: stamp(atMs), sampledValue: meter(wh, 'Sample.Periodic') }];
    if (v16)
      return {
        action: 'MeterValues',
        params: { connectorId: 1, transactionId: Number(txRef), meterValue },
      };
    if (s.meterValues201) return { action: 'MeterValues', params: { evseId: 1, meterValue } };
    return event('Updated', 'MeterValuePeriodic', atMs, { meterValue });
  };
  const chargingState = (atMs: number, state: 'Charging' | 'SuspendedEV'): Frame =>
    v16
      ? status(atMs, state)
      : event('Updated', 'ChargingStateChanged', atMs, {}, { chargingState: state });

  const ticks: Tick[] = [{ atMs: t0, wh: 0, reachable: true }];
  const paused = (k: number) => s.pauses.some((p) => k >= p.at && k < p.at + p.samples);
  const powerAt = (k: number, wh: number) => {
    if (paused(k)) return 0;
    if (s.taperFrom === null || wh < paidWh * s.taperFrom) return powerW;
    return powerW * Math.max(1 / 3, 1 - (wh / paidWh - s.taperFrom));
  };
  ev.draw(t0, powerAt(0, 0));
  let restarting: Promise<void> | null = null;
  const maxSamples = s.samplesToPaid * 3 + s.pauses.reduce((n, p) => n + p.samples, 0);
  const seed = s.amount * 7919 + s.samplesToPaid;
  let nextMs = t0;
  let endReason = 'Local';

  for (let k = 1; ; k++) {
    const jitter = s.jitter === 0 ? 0 : Math.sin(seed * k) * s.jitter;
    nextMs += s.intervalMs * (1 + jitter);
    await sleep(Math.max(0, nextMs - Date.now()));
    const firstStop = station.stopsAt[0];
    if (firstStop !== undefined) ev.stop(firstStop + s.lateStopMs);

    // What happens to the link, the clock and the gateway at this sample.
    if (s.kill?.at === k) {
      notes.push(`gateway killed at sample ${k}`);
      restarting = gw.killAndRestart(s.kill.downMs);
    }
    if (s.outage?.at === k) {
      station.offline = true;
      await station.drop();
    }
    if (s.outage && s.outage.at + s.outage.samples === k) station.offline = false;
    if (s.drops.includes(k)) await station.drop();
    if (s.clockStep?.at === k) clockMs += s.clockStep.stepMs;
    const now = Date.now();
    const wh = ev.energyAt(now);
    if (s.resetAt === k) {
      // A reboot: the link drops, BootNotification, and the register counts from 0.
      await station.drop();
      await station.reconnect(now + WAIT_MS);
      await station.send(boot);
      baseWh = 0;
      sinceWh = wh;
    }
    if (!station.online && !station.offline) {
      await station.reconnect(now + (restarting ? 100 : WAIT_MS)).catch(() => undefined);
      await station.flush();
    }

    const flowEnded = ev.stopped && now >= (firstStop ?? 0) + s.lateStopMs;
    const evFull = ev.full(now);
    if (flowEnded || evFull || k > maxSamples) {
      if (k > maxSamples) notes.push(`no stop after ${maxSamples} samples: the driver unplugged`);
      endReason = flowEnded ? 'Remote' : evFull ? 'EVDisconnected' : 'Local';
      ev.stop(now);
      ticks.push({ atMs: now, wh: ev.energyAt(now), reachable: station.online });
      break;
    }
    if (paused(k) && !paused(k - 1)) await station.send(chargingState(now, 'SuspendedEV'));
    if (!paused(k) && paused(k - 1)) await station.send(chargingState(now, 'Charging'));
    await station.send(sampleFrame(now, wh));
    ticks.push({ atMs: now, wh, reachable: station.online && station.queued === 0 });
    ev.draw(now, powerAt(k, wh));
  }

  // The transaction ends; the charger gets it to the gateway whatever happened to the link.
  const endMs = Date.now();
  const deliveredWh = ev.energyAt(endMs);
  const endValues = meter(deliveredWh, 'Transaction.End');
  await station.send(
    v16
      ? {
          action: 'StopTransaction',
          params: {
            transactionId: Number(txRef),
            meterStop: mainRegister(s, baseWh, deliveredWh - sinceWh),
            timestamp: stamp(endMs),
            reason: endReason,
            transactionData: [{ timestamp: stamp(endMs), sampledValue: endValues }],
          },
        }
      : event(
          'Ended',
          endReason === 'Remote' ? 'RemoteStop' : 'EVDeparted',
          endMs,
          { meterValue: [{ timestamp: stamp(endMs), sampledValue: endValues }] },
          { stoppedReason: endReason, chargingState: 'Idle' },
        ),
  );
  await restarting;
  station.offline = false;
  const deadline = Date.now() + WAIT_MS;
  while (station.queued > 0 || !station.online) {
    if (Date.now() > deadline) throw new Error('the charger could not deliver its queue');
    if (!station.online) await station.reconnect(deadline);
    await station.flush();
  }

  const row = await settled(gw, sessionId);
  const stoppedAt = station.stopsAt[0];
  return {
    paidWh,
    deliveredWh,
    sampleWorthWh: worth(ticks) + quantizationWh(s),
    stoppedAtWh: stoppedAt === undefined ? null : ev.energyAt(stoppedAt),
    evStopped: ev.full(stoppedAt ?? endMs),
    stoppedUnheard: station.firstStopInOutage === true,
    stopBoundWh: stopBound(ticks, paidWh),
    state: row.state,
    billedWh: row.delivered_wh,
    cost: row.cost,
    credited: row.credited,
    amount: s.amount,
    ledgerProblems: gw.read((db) =>
      verifyLedger(db)
        .checks.filter((c) => c.violations.length > 0)
        .map((c) => `${c.name}: ${JSON.stringify(c.violations).slice(0, 200)}`),
    ),
    notes: [
      ...notes,
      `frames sent: ${[...station.sent].map(([a, n]) => `${a} ${n}`).join(', ')}`,
      ...warnings(gw.lines()),
    ],
  };
}

interface SessionRow {
  state: string;
  delivered_wh: number | null;
  cost: number | null;
  credited: number | null;
}

async function settled(gw: SimGateway, sessionId: string): Promise<SessionRow> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const row = gw.read(
      (db) =>
        db
          .prepare('SELECT state, delivered_wh, cost, credited FROM sessions WHERE id = ?')
          .get(sessionId) as SessionRow,
    );
    if (row.state === 'settled' || Date.now() > deadline) return row;
    await sleep(20);
  }
}

/** The most energy between two consecutive samples. */
function worth(ticks: Tick[]): number {
  let most = 0;
  for (let i = 1; i < ticks.length; i++)
    most = Math.max(most, (ticks[i] as Tick).wh - (ticks[i - 1] as Tick).wh);
  return most;
}

/**
 * The paid energy if the charger could be told to stop from the sample before the crossing to the
 * one after it; else the energy flowed by the first sample from the crossing on at which it could
 * again (a charger offline, or a gateway down, cannot be stopped; a stop sent as the link drops is
 * lost with it).
 */
function stopBound(ticks: Tick[], paidWh: number): number {
  const cross = ticks.findIndex((t) => t.wh >= paidWh);
  if (cross < 0) return paidWh;
  if (ticks[cross - 1]?.reachable !== false && ticks[cross]?.reachable) return paidWh;
  const back = ticks.slice(cross).find((t) => t.reachable);
  return Math.max(paidWh, back?.wh ?? (ticks.at(-1) as Tick).wh);
}

/** The gateway's warnings, each once with its count: what it made of the run. */
function warnings(lines: string[]): string[] {
  const counts = new Map<string, number>();
  for (const line of lines) {
    let entry: { level?: number; msg?: string } = {};
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue;
    }
    if ((entry.level ?? 0) >= 40 && entry.msg)
      counts.set(entry.msg, (counts.get(entry.msg) ?? 0) + 1);
  }
  return [...counts].map(([msg, n]) => `gateway: ${msg.slice(0, 140)} ×${n}`);
}
