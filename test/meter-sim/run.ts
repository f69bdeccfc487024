import { randomUUID } from 'node:crypto';
import { verifyLedger } from '../../src/cli/offline/verify-ledger.js';
import { API_KEY, DRIVERS } from '../helpers/gateway.js';
import { mintToken, startSession } from '../helpers/http.js';
import type { Frame } from '../helpers/raw-stations.js';
import { METER_MAX_WH, type Scenario } from './classes.js';
import { startSimGateway, type SimGateway } from './gateway.js';
import { Ev, mainRegister, quantizationWh, sampledValues, type Count } from './meter.js';
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
  /** Energy the charger's readings do not prove: the billing floor leaves it out (Wh). */
  unprovenWh: number;
  /** What the meter's rounding may hide (Wh). */
  quantizationWh: number;
  /** Energy delivered when the gateway's first stop reached the charger; null: none did. */
  stoppedAtWh: number | null;
  /** The EV was full (stopped drawing) when the flow ended or the stop came. */
  evStopped: boolean;
  /** How the gateway answered a start it refused (the charger then never charges); null: accepted. */
  startRefused: string | null;
  /** Frames the gateway answered with a CALLERROR or not at all. */
  unanswered: string[];
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
  /** The reading carried energy (not power only). */
  energy: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const WAIT_MS = 20_000;

/** One seeded run: a paid session on CP-1 connector 1, driven from the truth to its settlement. */
export async function runScenario(s: Scenario): Promise<RunResult> {
  const paidWh = Math.floor((s.amount * 1_000_000) / PRICE);
  const powerW = (paidWh / s.samplesToPaid) * (3_600_000 / s.intervalMs);
  const maxPowerKw = s['power-bound'] === 'none' ? undefined : (powerW * s.powerBoundFactor) / 1000;
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
  const fullWh = s.ev === 'stops-itself' ? paidWh * s.evFullShare : Number.POSITIVE_INFINITY;
  const ev = new Ev(t0, fullWh);
  let count: Count = { baseWh: s.startRegisterWh, sinceWh: 0 };
  const res0 = quantum(s);
  const reading = (
    atMs: number,
    wh: number,
    sinceWh: number,
    context: string | undefined,
    energy: boolean,
  ) =>
    sampledValues(s, {
      count,
      wh,
      intervalWh: res0(wh) - res0(sinceWh),
      powerW: ev.powerAt(atMs),
      soc: Math.min(100, 40 + Math.floor((wh / paidWh) * 20)),
      energy,
      context,
    });
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
  const meterValue = (atMs: number, sampledValue: Record<string, unknown>[]) =>
    sampledValue.length === 0 ? [] : [{ timestamp: stamp(atMs), sampledValue }];

  // The charger's start: the token it sends back shaped by its firmware.
  const idTag = shapeId(remote.idToken, s['id-shape']);
  const beginValues = s['transaction-values'] === 'begin+end';
  let txRef: string = randomUUID();
  let startStatus: string;
  const startWh = mainRegister(s, count, 0);
  if (v16) {
    const meterStart =
      s['meter-start'] === 'decimal kWh'
        ? startWh / 1000
        : s['meter-start'] === 'zero'
          ? 0
          : startWh;
    const reply = (await station.send({
      action: 'StartTransaction',
      params: { connectorId: 1, idTag, meterStart, timestamp: stamp(t0) },
    })) as { transactionId?: number; idTagInfo?: { status?: string } } | undefined;
    txRef = String(reply?.transactionId);
    startStatus = reply?.idTagInfo?.status ?? 'no answer';
  } else {
    const reply = (await station.send(
      event(
        'Started',
        'RemoteStart',
        t0,
        {
          idToken: { idToken: idTag, type: 'Central' },
          evse: { id: 1, connectorId: 1 },
          ...(beginValues && {
            meterValue: meterValue(t0, reading(t0, 0, 0, 'Transaction.Begin', true)),
          }),
        },
        { chargingState: 'Charging', remoteStartId: remote.remoteStartId },
      ),
    )) as { idTokenInfo?: { status?: string } } | undefined;
    // 2.0.1 may leave the token's status out of the answer: then it was not refused.
    startStatus = reply === undefined ? 'no answer' : (reply.idTokenInfo?.status ?? 'Accepted');
  }
  const refused = startStatus !== 'Accepted';
  if (refused) notes.push(`the start was answered ${startStatus}: the charger does not charge`);
  else if (v16) await station.send(status(t0, 'Charging'));

  const sampleFrame = (atMs: number, values: Record<string, unknown>[], clock = false): Frame => {
    const mv = meterValue(atMs, values);
    if (v16)
      return {
        action: 'MeterValues',
        params: { connectorId: 1, transactionId: Number(txRef), meterValue: mv },
      };
    if (s['meter-values-201'] === 'meter-values')
      return { action: 'MeterValues', params: { evseId: 1, meterValue: mv } };
    return event('Updated', clock ? 'MeterValueClock' : 'MeterValuePeriodic', atMs, {
      meterValue: mv,
    });
  };
  const chargingState = (atMs: number, state: 'Charging' | 'SuspendedEV'): Frame =>
    v16
      ? status(atMs, state)
      : event('Updated', 'ChargingStateChanged', atMs, {}, { chargingState: state });

  const ticks: Tick[] = [{ atMs: t0, wh: 0, reachable: true, energy: beginValues || v16 }];
  const paused = (k: number) => s.pauses.some((p) => k >= p.at && k < p.at + p.samples);
  const powerAt = (k: number, wh: number) => {
    if (refused || paused(k)) return 0;
    if (s.ev !== 'taper' || wh < paidWh * s.taperFrom) return powerW;
    return powerW * Math.max(1 / 3, 1 - (wh / paidWh - s.taperFrom));
  };
  ev.draw(t0, powerAt(0, 0));
  let restarting: Promise<void> | null = null;
  const maxSamples = refused
    ? 0
    : s.samplesToPaid * 3 + s.pauses.reduce((n, p) => n + p.samples, 0);
  const seed = s.amount * 7919 + s.samplesToPaid;
  let nextMs = t0;
  let endReason = refused ? 'DeAuthorized' : 'Local';
  let lastAlignedWh = 0;
  let lifeTick: number | null = null;

  for (let k = 1; ; k++) {
    const jitter = s.jitter === 0 ? 0 : Math.sin(seed * k) * s.jitter;
    const prevMs = nextMs;
    nextMs += s.intervalMs * (1 + jitter);
    if (!refused) await sleep(Math.max(0, nextMs - Date.now()));
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
    if (s.dropsAt.includes(k)) await station.drop();
    if (s.clockStep?.at === k) clockMs += s.clockStep.stepMs;
    const now = Date.now();
    const wh = ev.energyAt(now);
    if (s.lifeAt === k && s['register-life'] !== 'steady' && s['register-life'] !== 'roll-over') {
      lifeTick = ticks.length;
      if (s['register-life'] === 'reset-with-reboot') {
        // A reboot: the link drops, BootNotification, and the register counts from 0.
        await station.drop();
        await station.reconnect(now + WAIT_MS);
        await station.send(boot);
        if (!v16 && s['seq-no'] === 'restarted') seqNo = 0;
      }
      const rebased = ((s.startRegisterWh + 2_500_000) % 5_000_000) + 1;
      count = { baseWh: s['register-life'] === 're-based' ? rebased : 0, sinceWh: wh };
    }
    if (!station.online && !station.offline) {
      await station.reconnect(now + (restarting ? 100 : WAIT_MS)).catch(() => undefined);
      await station.flush();
    }

    const flowEnded = ev.stopped && now >= (firstStop ?? 0) + s.lateStopMs;
    const evFull = ev.full(now);
    if (flowEnded || evFull || k > maxSamples) {
      if (k > maxSamples && !refused)
        notes.push(`no stop after ${maxSamples} samples: the driver unplugged`);
      if (!refused) endReason = flowEnded ? 'Remote' : evFull ? 'EVDisconnected' : 'Local';
      ev.stop(now);
      ticks.push({ atMs: now, wh: ev.energyAt(now), reachable: station.online, energy: true });
      break;
    }
    if (paused(k) && !paused(k - 1)) await station.send(chargingState(now, 'SuspendedEV'));
    if (!paused(k) && paused(k - 1)) await station.send(chargingState(now, 'Charging'));
    const energy = s['energy-from'] === 'first-sample' || k > s.powerOnlySamples;
    if (s['clock-aligned'] === 'also' && k % 3 === 0) {
      // A clock boundary between the last sample and this one: its interval is the aligned one's.
      const atMs = (prevMs + now) / 2;
      const alignedWh = ev.energyAt(atMs);
      await station.send(
        sampleFrame(atMs, reading(atMs, alignedWh, lastAlignedWh, 'Sample.Clock', energy), true),
      );
      lastAlignedWh = alignedWh;
    }
    if (k === s.eventAt && !v16 && s['seq-no'] === 'repeated') seqNo = Math.max(0, seqNo - 1);
    if (k === s.eventAt && !v16 && s['seq-no'] === 'restarted') seqNo = 0;
    const context = s.context === 'absent' ? undefined : s.context;
    const frame = sampleFrame(now, reading(now, wh, (ticks.at(-1) as Tick).wh, context, energy));
    await station.send(frame);
    if (k === s.eventAt && s.repeats === 'sample') await station.send(frame);
    if ((k === s.eventAt || k === s.eventAt + 3) && s.notifications !== 'none')
      await station.send(notification(s, stamp(now)));
    ticks.push({ atMs: now, wh, reachable: station.online && station.queued === 0, energy });
    ev.draw(now, powerAt(k, wh));
  }

  // The transaction ends; the charger gets it to the gateway whatever happened to the link.
  const endMs = Date.now();
  const deliveredWh = ev.energyAt(endMs);
  const prevWh = (ticks.at(-2) as Tick).wh;
  const endValues = [
    ...(s['transaction-values'] === 'begin+end' && v16
      ? meterValue(t0, reading(t0, 0, 0, 'Transaction.Begin', true))
      : []),
    ...(s['transaction-values'] === 'none'
      ? []
      : meterValue(endMs, reading(endMs, deliveredWh, prevWh, 'Transaction.End', true))),
  ];
  const stop: Frame = v16
    ? {
        action: 'StopTransaction',
        params: {
          transactionId: Number(txRef),
          meterStop: mainRegister(s, count, deliveredWh),
          timestamp: stamp(endMs),
          reason: endReason,
          ...(endValues.length > 0 && { transactionData: endValues }),
        },
      }
    : event(
        'Ended',
        endReason === 'Remote'
          ? 'RemoteStop'
          : endReason === 'DeAuthorized'
            ? 'Deauthorized'
            : 'EVDeparted',
        endMs,
        endValues.length > 0 ? { meterValue: endValues } : {},
        { stoppedReason: endReason, chargingState: 'Idle' },
      );
  await station.send(stop);
  if (s.repeats === 'stop') await station.send(stop);
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
    unprovenWh: unproven(s, ticks, deliveredWh, lifeTick),
    quantizationWh: quantizationWh(s),
    stoppedAtWh: stoppedAt === undefined ? null : ev.energyAt(stoppedAt),
    evStopped: ev.full(stoppedAt ?? endMs),
    startRefused: refused ? startStatus : null,
    stoppedUnheard: station.firstStopInOutage === true,
    stopBoundWh: stopBound(ticks, paidWh),
    unanswered: [...station.unanswered],
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

/** The meter's rounding of an energy to its resolution (for interval energy). */
function quantum(s: Scenario): (wh: number) => number {
  const res = { '1 Wh': 1, '10 Wh': 10, '100 Wh': 100 }[s.resolution];
  return (wh) => Math.floor(wh / res) * res;
}

/** The token a charger of this firmware sends back for the one it was given. */
export function shapeId(id: string, shape: Scenario['id-shape']): string {
  switch (shape) {
    case 'as-sent':
      return id;
    case 'lower-case':
      return id.toLowerCase();
    case 'mixed-case':
      return [...id].map((c, i) => (i % 2 === 0 ? c.toLowerCase() : c)).join('');
    case 'padded':
      return `${id}  `;
  }
}

/** A station's own notification of the run's kind, as its protocol words it. */
function notification(s: Scenario, timestamp: string): Frame {
  const v16 = s.protocol === 'ocpp1.6';
  switch (s.notifications) {
    case 'security-event':
      return {
        action: 'SecurityEventNotification',
        params: { type: 'SettingSystemTime', timestamp },
      };
    case 'log-status':
      return { action: 'LogStatusNotification', params: { status: 'Idle' } };
    case 'firmware-status':
      return { action: 'FirmwareStatusNotification', params: { status: 'Idle' } };
    case 'heartbeat':
      return { action: 'Heartbeat', params: {} };
    case 'data-transfer':
    case 'none':
      return {
        action: 'DataTransfer',
        params: { vendorId: 'com.acme', messageId: 'diagnostics', data: v16 ? 'ok' : { ok: true } },
      };
  }
}

/**
 * Energy the charger's readings do not prove (Wh): before the first reading with energy when the
 * start names no register (or, for interval energy, before the interval it covers); from the
 * reading before a register started again (reset, roll-over, re-basing) to the one confirming it;
 * after the last sample when the end carries no reading (2.0.1).
 */
function unproven(s: Scenario, ticks: Tick[], deliveredWh: number, lifeTick: number | null) {
  const v16 = s.protocol === 'ocpp1.6';
  const register = s.energy !== 'interval';
  const anchored = v16
    ? s['meter-start'] !== 'zero' || s.startRegisterWh === 0
    : s['transaction-values'] === 'begin+end';
  const first = ticks.findIndex((t, i) => i > 0 && t.energy);
  let wh = 0;
  if (first > 0 && !(register && anchored)) wh += (ticks[register ? first : first - 1] as Tick).wh;
  // A register that dropped is believed once the reading after the drop confirms it.
  const dropAt =
    s['register-life'] === 'roll-over'
      ? ticks.findIndex((t) => s.startRegisterWh + t.wh >= METER_MAX_WH)
      : (lifeTick ?? -1);
  if (dropAt > 0) wh += (ticks[dropAt + 1]?.wh ?? deliveredWh) - (ticks[dropAt - 1] as Tick).wh;
  if (!v16 && s['transaction-values'] === 'none') wh += deliveredWh - (ticks.at(-2) as Tick).wh;
  return wh;
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
    if (row.state === 'settled' || row.state === 'refunded' || Date.now() > deadline) return row;
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
