import { describe, expect, it } from 'vitest';
import {
  raw16,
  raw201,
  RAW_PROTOCOLS,
  type Frame,
  type RawProtocol,
  type RawStation,
  type StationTx,
} from './helpers/raw-stations.js';
import { chargeUntilStopped, harness, LIMIT_WH, sleep } from './helpers/session-harness.js';
import { waitUntil } from './helpers/wait.js';

/**
 * The fixed cases of the meter classes (docs/meter-readings.md): one paid session per class on a
 * raw-frame charger against the real gateway, each failing on the code before the class was
 * handled. "Bill on the proven, stop on the possible, judge each reading at the time it was
 * measured": every case checks where the stop came against the energy really delivered, and
 * what was billed against what the readings prove.
 */

/** A sample frame of the station's protocol (its transaction, sequence number) with other values. */
function withValues(
  station: RawStation,
  tx: StationTx,
  meterValue: { timestamp: string; sampledValue: Record<string, unknown>[] }[],
): Frame {
  const frame = station.sample(tx, 0);
  return { ...frame, params: { ...frame.params, meterValue } };
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * When the station received the gateway's first stop (Date.now ms): what flowed by then is what
 * the stop is judged on, not what flowed by the time the test's loop noticed it (on a loaded
 * machine a loop turn can take hundreds of milliseconds).
 */
function stopTime(station: RawStation): () => number | undefined {
  let at: number | undefined;
  const push = station.stops.push.bind(station.stops);
  station.stops.push = (...refs: string[]) => {
    at ??= Date.now();
    return push(...refs);
  };
  return () => at;
}

const losses = (h: ReturnType<typeof harness>, id: string) =>
  h.t.gw.db
    .prepare('SELECT wh, reason FROM operator_losses WHERE session_id = ? ORDER BY id')
    .all(id) as { wh: number; reason: string }[];

/** A sample with only `Power.Active.Import`, in W, as the station's protocol writes it. */
function powerOnly(station: RawStation, tx: StationTx, protocol: RawProtocol, powerW: number) {
  const value =
    protocol === raw16
      ? { measurand: 'Power.Active.Import', value: String(powerW), unit: 'W' }
      : { measurand: 'Power.Active.Import', value: powerW, unitOfMeasure: { unit: 'W' } };
  return withValues(station, tx, [
    { timestamp: iso(Date.now()), sampledValue: [{ ...value, context: 'Sample.Periodic' }] },
  ]);
}

describe.each(RAW_PROTOCOLS)('meter classes, power without a register: $name', (protocol) => {
  const h = harness({});

  it('a charger that samples only its power is stopped once that power may have delivered the paid energy; billed on its stop register', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    // Half a Wh a millisecond (1.8 MW, said in each sample); no sample carries a register.
    // The transaction starts when the charger sends its start, before the reply.
    const t0 = Date.now();
    const truthAt = (ms: number) => Math.round((ms - t0) / 2);
    const truth = () => truthAt(Date.now());
    const stoppedAt = stopTime(station);
    const { tx } = await station.start(50_000);
    while (station.stops.length === 0 && truth() < 4_000) {
      await sleep(100);
      await station.send(powerOnly(station, tx, protocol, 1_800_000));
    }
    const delivered = truthAt(stoppedAt() ?? Date.now());
    expect(delivered).toBeLessThanOrEqual(LIMIT_WH + 250);
    expect(delivered).toBeGreaterThanOrEqual(LIMIT_WH - 250);
    await station.send(station.end(tx, 50_000 + delivered, { reason: 'Remote' }));
    await h.settled(sessionId);
    h.settledOnce(sessionId, delivered);
  });
});

describe('meter classes, power before the first register: OCPP 2.0.1', () => {
  const h = harness({});

  it('energy the station said it was drawing before its first register counts toward the stop, never toward the bill', async () => {
    const { station, sessionId } = await h.paidSession(raw201);
    // A Started without a meter value, then three samples with only the power (half a Wh a
    // millisecond, 1.8 MW), then registers.
    const t0 = Date.now();
    const truthAt = (ms: number) => Math.round((ms - t0) / 2);
    const truth = () => truthAt(Date.now());
    const stoppedAt = stopTime(station);
    const { tx } = await station.start(0, { noRegister: true });
    for (let k = 0; k < 3; k++) {
      await sleep(200);
      await station.send(powerOnly(station, tx, raw201, 1_800_000));
    }
    await sleep(100);
    const firstAt = truth();
    const first = 50_000;
    await station.send(station.sample(tx, first));
    let wh = first;
    while (station.stops.length === 0 && truth() < 4_000) {
      await sleep(100);
      wh = first + truth() - firstAt;
      await station.send(station.sample(tx, wh));
    }
    // Delivered: about 300 Wh before the first register, and the registers since.
    const delivered = truthAt(stoppedAt() ?? Date.now());
    expect(delivered).toBeLessThanOrEqual(LIMIT_WH + 250);
    expect(delivered).toBeGreaterThanOrEqual(LIMIT_WH - 250);
    await station.send(station.end(tx, wh, { reason: 'Remote' }));
    await h.settled(sessionId);
    h.settledOnce(sessionId, wh - first);
    // What the power said and no register proved is the operator's loss, recorded.
    const unproven = losses(h, sessionId).filter((l) => l.reason === 'unproven');
    expect(unproven[0]?.wh ?? 0).toBeGreaterThanOrEqual(250);
  });
});

describe.each(RAW_PROTOCOLS)(
  'meter classes, a register that falls without a reboot: $name',
  (protocol) => {
    const h = harness({});

    it('one low reading followed by the register where it was is a glitch: nothing is counted twice', async () => {
      const { station, sessionId } = await h.paidSession(protocol);
      const { tx } = await station.start(10_000);
      for (const wh of [10_100, 10_200, 0, 10_400, 10_500]) {
        await sleep(100);
        await station.send(station.sample(tx, wh));
      }
      await station.send(station.end(tx, 10_500, { reason: 'EVDisconnected' }));
      await h.settled(sessionId);
      h.settledOnce(sessionId, 500);
    });

    it('a register back at 0 mid-session that counts up again is a reset: the new segment is billed, the stop comes at the paid energy', async () => {
      const { station, sessionId } = await h.paidSession(protocol);
      // 1 Wh a millisecond from 1,234,772 Wh; the register falls to 0 with no BootNotification.
      const { tx } = await station.start(1_234_772);
      for (const wh of [1_234_872, 1_234_972]) {
        await sleep(100);
        await station.send(station.sample(tx, wh));
      }
      await sleep(100);
      await station.send(station.sample(tx, 0));
      const wh = await chargeUntilStopped(station, tx, 0, 4_000);
      // Delivered: 200 Wh, about 100 to the drop (never proven), and the new segment.
      expect(300 + wh).toBeLessThanOrEqual(LIMIT_WH + 200);
      expect(300 + wh).toBeGreaterThanOrEqual(LIMIT_WH - 200);
      await station.send(station.end(tx, wh, { reason: 'Remote' }));
      await h.settled(sessionId);
      h.settledOnce(sessionId, 200 + wh);
    });
  },
);

/** 1.6 interval energy of one timing, measured at `atMs`. */
const interval16 = (wh: number, context: string, atMs = Date.now()) => [
  {
    timestamp: iso(atMs),
    sampledValue: [
      { measurand: 'Energy.Active.Import.Interval', context, value: String(wh), unit: 'Wh' },
    ],
  },
];

/**
 * 100 Wh every 100 ms (1 Wh a millisecond) until the gateway stops the session, each sample sent
 * by `send` (numbered from 1); then the end at register `startWh` + what flowed: the stop came at
 * the paid energy and the session is billed what flowed.
 */
async function intervalsUntilStopped(
  h: ReturnType<typeof harness>,
  { station, sessionId }: { station: RawStation; sessionId: string },
  tx: StationTx,
  startWh: number,
  send: (k: number) => Promise<unknown>,
) {
  let delivered = 0;
  let k = 0;
  while (station.stops.length === 0 && delivered < 4_000) {
    await sleep(100);
    delivered += 100;
    k++;
    await send(k);
  }
  expect(delivered).toBeGreaterThanOrEqual(LIMIT_WH - 200);
  expect(delivered).toBeLessThanOrEqual(LIMIT_WH + 200);
  await station.send(station.end(tx, startWh + delivered, { reason: 'Remote' }));
  await h.settled(sessionId);
  h.settledOnce(sessionId, delivered);
}

describe('meter classes, interval energy of two timings: OCPP 1.6J', () => {
  const h = harness({});

  it('periodic and clock-aligned interval energy over the same time are counted once: stopped at the paid energy', async () => {
    const session = await h.paidSession(raw16);
    const { station } = session;
    const { tx } = await station.start(10_000);
    // 100 Wh every periodic sample, and every fourth sample a clock-aligned one whose interval
    // (400 Wh) spans the four periodic ones before it.
    await intervalsUntilStopped(h, session, tx, 10_000, async (k) => {
      await station.send(withValues(station, tx, interval16(100, 'Sample.Periodic')));
      if (k % 4 === 0) await station.send(withValues(station, tx, interval16(400, 'Sample.Clock')));
    });
  });
});

describe('meter classes, interval energy from a clock stepped back: OCPP 1.6J', () => {
  const h = harness({});

  it('intervals stamped before the last one added are their own energy, not resends: stopped at the paid energy', async () => {
    const session = await h.paidSession(raw16);
    const { station } = session;
    const { tx } = await station.start(10_000);
    // After the fifth sample the charger's clock steps back an hour (the meter simulation found
    // such a session never stopped: 3.8 kWh for 1.2 paid).
    await intervalsUntilStopped(h, session, tx, 10_000, async (k) => {
      const atMs = Date.now() - (k > 5 ? 3_600_000 : 0);
      await station.send(withValues(station, tx, interval16(100, 'Sample.Periodic', atMs)));
    });
  });
});

describe('meter classes, interval energy in MeterValues: OCPP 2.0.1', () => {
  const h = harness({});
  const interval201 = (wh: number) => [
    {
      timestamp: iso(Date.now()),
      sampledValue: [
        {
          measurand: 'Energy.Active.Import.Interval',
          context: 'Sample.Periodic',
          value: wh,
          unitOfMeasure: { unit: 'Wh' },
        },
      ],
    },
  ];

  it('a station sending its interval energy in MeterValues (and the same energy in its events) is stopped at the paid energy and billed it once', async () => {
    const session = await h.paidSession(raw201);
    const { station } = session;
    const { tx } = await station.start(0);
    // Every sample in MeterValues, outside TransactionEvent (the meter simulation found such a
    // session never stopped: 3.8 kWh for 1.2 paid, billed 152 Wh); every second one the same
    // energy also in an event: two accounts of it, counted once.
    await intervalsUntilStopped(h, session, tx, 0, async (k) => {
      await station.send({
        action: 'MeterValues',
        params: { evseId: tx.connector, meterValue: interval201(100) },
      });
      if (k % 2 === 0) await station.send(withValues(station, tx, interval201(200)));
    });
  });
});

describe('meter classes, a 1.6 meterStart in decimal kWh', () => {
  const h = harness({});

  it('the energy between a decimal-kWh meterStart and the first sample is billed: the start is read in kWh, to the Wh it was written to', async () => {
    const { station, sessionId } = await h.paidSession(raw16);
    // meterStart 1234.567 kWh, samples in kWh: 250 Wh before the first sample.
    const { tx } = await station.start(1234.567);
    let wh = 1_234_817;
    await sleep(100);
    await station.send(station.sample(tx, wh, { format: 'kWh' }));
    while (station.stops.length === 0 && wh < 1_234_567 + 4_000) {
      await sleep(100);
      wh += 100;
      await station.send(station.sample(tx, wh, { format: 'kWh' }));
    }
    await waitUntil(() => station.stops.length > 0, 5000, 'stop at the paid energy');
    expect(wh - 1_234_567).toBeLessThanOrEqual(LIMIT_WH + 200);
    expect(wh - 1_234_567).toBeGreaterThanOrEqual(LIMIT_WH - 200);
    await station.send(station.end(tx, wh, { reason: 'Remote' }));
    await h.settled(sessionId);
    h.settledOnce(sessionId, wh - 1_234_567);
  });
});

describe.each(RAW_PROTOCOLS)(
  'meter classes, a stop register below the last counted one: $name',
  (protocol) => {
    const h = harness({});

    it('a register from 0 reset by a reboot just before the stop: billed what the samples proved, not the stop register', async () => {
      const { station, sessionId } = await h.paidSession(protocol);
      // The meter simulation's case (seed 4040): a register from 0, three samples, a reboot
      // resetting it, the EV full at once: the stop register 0 settled the session on 0 Wh.
      const { tx } = await station.start(0);
      for (const wh of [274, 546, 824]) {
        await sleep(100);
        await station.send(station.sample(tx, wh));
      }
      await station.reboot();
      await station.send(station.end(tx, 0, { reason: 'EVDisconnected' }));
      await h.settled(sessionId);
      h.settledOnce(sessionId, 824);
    });
  },
);
