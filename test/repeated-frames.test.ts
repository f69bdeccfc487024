import { randomUUID } from 'node:crypto';
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
import { harness, sleep } from './helpers/session-harness.js';
import { waitUntil } from './helpers/wait.js';

/**
 * Repeated frames and sequence numbers as a class (docs/ocpp.md "Repeated frames and sequence
 * numbers"): a call is known by what it says, never by its message id (ids are the connection's,
 * and firmware resends under the old id or a new one); a 2.0.1 seqNo tells a repeat from a new
 * event, but a repeated, restarted or gapped seqNo never loses an event or counts one twice.
 */

/**
 * A sample taking the register from `fromWh` to `toWh`, stamped `at`: on 1.6 as interval energy
 * (energy since the previous sample, where a repeat counted twice would move money), on 2.0.1 as
 * the register (2.0.1 interval energy is the meter model's, docs/field-compatibility.md).
 */
function step(
  protocol: RawProtocol,
  station: RawStation,
  tx: StationTx,
  [fromWh, toWh]: [number, number],
  at: string,
): Frame {
  if (protocol !== raw16) return station.sample(tx, toWh, { timestamp: at });
  const value = String(toWh - fromWh);
  return {
    action: 'MeterValues',
    params: {
      connectorId: tx.connector,
      transactionId: Number(tx.ref),
      meterValue: [
        {
          timestamp: at,
          sampledValue: [{ value, measurand: 'Energy.Active.Import.Interval', unit: 'Wh' }],
        },
      ],
    },
  };
}

/** A 2.0.1 frame with the seqNo a test gives it. */
const numbered = (f: Frame, seqNo: number): Frame => ({ ...f, params: { ...f.params, seqNo } });

const secondsAgo = (s: number) => new Date(Date.now() - s * 1000).toISOString();

/** Sends a call under a message id of our choosing and waits for its answer. */
async function sendWithId(station: RawStation, id: string, frame: Frame): Promise<unknown> {
  const answered = new Promise<unknown>((resolve) => {
    const onMessage = ({ message, outbound }: { message: string; outbound: boolean }) => {
      if (outbound) return;
      const m = JSON.parse(message) as unknown[];
      if (m[1] !== id) return;
      station.cp.off('message', onMessage);
      resolve(m);
    };
    station.cp.on('message', onMessage);
  });
  station.cp.sendRaw(JSON.stringify([2, id, frame.action, frame.params]));
  return answered;
}

describe.each(RAW_PROTOCOLS)('repeated frames: $name', (protocol) => {
  const h = harness({});

  it('a sample sent twice under the same message id counts once', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx } = await station.start(10_000);
    const sample = step(protocol, station, tx, [10_000, 10_300], secondsAgo(2));
    const id = randomUUID();
    const first = await sendWithId(station, id, sample);
    expect(await sendWithId(station, id, sample)).toEqual(first);
    expect(h.session(sessionId).last_meter_wh).toBe(10_300);
    await station.send(station.end(tx, 10_500));
    h.settledOnce(sessionId, 500);
  });

  it('a sample sent again after a reconnect, under a new message id, counts once', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx } = await station.start(10_000);
    const sample = step(protocol, station, tx, [10_000, 10_300], secondsAgo(3));
    await station.send(sample);
    await station.reconnect();
    await station.send(sample);
    await station.send(step(protocol, station, tx, [10_300, 10_500], secondsAgo(1)));
    expect(h.session(sessionId).last_meter_wh).toBe(10_500);
    await station.send(station.end(tx, 10_600));
    h.settledOnce(sessionId, 600);
  });
});

describe('2.0.1 sequence numbers', () => {
  const h = harness({});
  const protocol = raw201;

  it('an event re-sent with a new seqNo (renumbered after a reconnect) is applied once; its end once', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx } = await station.start(10_000);
    const sample = station.sample(tx, 10_300, { timestamp: secondsAgo(2) });
    await station.send(sample);
    await station.reconnect();
    await station.send(numbered(sample, 50));
    expect(h.session(sessionId).last_meter_wh).toBe(10_300);
    const end = station.end(tx, 10_400);
    await station.send(end);
    await station.send(numbered(end, 51));
    h.settledOnce(sessionId, 400);
  });

  it('seqNo restarted at 0 after a reboot: the new events apply, once each', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx } = await station.start(10_000);
    await station.send(station.sample(tx, 10_400));
    await station.reboot();
    const restarted = (wh: number, seqNo: number) => numbered(station.sample(tx, wh), seqNo);
    await station.send(restarted(10_700, 0));
    await station.send(restarted(10_900, 1));
    await station.send(restarted(10_900, 1));
    expect(h.session(sessionId)).toMatchObject({ state: 'charging', last_meter_wh: 10_900 });
    const end = station.end(tx, 11_100);
    await station.send(numbered(end, 2));
    h.settledOnce(sessionId, 1_100);
  });

  it('seqNo with gaps: every event applies at once, none waits for the missing ones', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx } = await station.start(10_000);
    const gapped = (wh: number, seqNo: number) => numbered(station.sample(tx, wh), seqNo);
    await station.send(gapped(10_300, 5));
    expect(h.session(sessionId).last_meter_wh).toBe(10_300);
    await station.send(gapped(10_800, 17));
    expect(h.session(sessionId).last_meter_wh).toBe(10_800);
    await sleep(50);
    const end = station.end(tx, 11_000);
    await station.send(numbered(end, 40));
    await waitUntil(() => h.session(sessionId).state === 'settled', 5000, 'settled');
    h.settledOnce(sessionId, 1_000);
  });
});
