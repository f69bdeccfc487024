import { describe, expect, it } from 'vitest';
import { testChargers } from './helpers/gateway.js';
import { RAW_PROTOCOLS } from './helpers/raw-stations.js';
import { harness, sleep } from './helpers/session-harness.js';
import { waitUntil } from './helpers/wait.js';

/**
 * Real chargers in the field (docs/field-compatibility.md, the session rows): what they send is
 * taken, the stop is never lost, and only proven energy is billed. Every case runs against OCPP
 * 1.6J and 2.0.1 raw frames over a real socket; each names the failure it guards against.
 */

const at = (msFromNow: number) => new Date(Date.now() + msFromNow).toISOString();

describe.each(RAW_PROTOCOLS)('field sessions: $name', (protocol) => {
  const h = harness({});

  it('a burst of samples queued over a minute and sent at once is a rate over that minute, not a stop at half the paid energy', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    // The charger was cut off for a minute: its start and four samples (150 Wh each 15 s, 36 kW)
    // arrive within milliseconds. On the receive clock that is megawatts and an immediate stop.
    const { tx } = await station.start(10_000, { timestamp: at(-60_000) });
    for (let k = 1; k <= 4; k++)
      await station.send(
        station.sample(tx, 10_000 + 150 * k, { timestamp: at(-60_000 + 15_000 * k) }),
      );
    await sleep(300);
    expect(station.stops).toEqual([]);
    expect(h.session(sessionId)).toMatchObject({ state: 'charging', last_meter_wh: 10_600 });
    await station.send(station.end(tx, 10_700, { reason: 'EVDisconnected' }));
    await h.settled(sessionId);
    h.settledOnce(sessionId, 700);
  });

  it('a charger clock hours behind still gets its stop predicted before the paid energy', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const skew = -3 * 3_600_000;
    const { tx } = await station.start(10_000, { timestamp: at(skew) });
    // Live samples 100 ms apart on the charger's (late) clock: 800 Wh each, 2,424 Wh paid, so the
    // limit is due a little after the second; nothing more is sent, the prediction must fire.
    for (const wh of [10_800, 11_600]) {
      await sleep(100);
      await station.send(station.sample(tx, wh, { timestamp: at(skew) }));
    }
    await waitUntil(() => station.stops.length > 0, 5000, 'predicted stop');
    expect(h.session(sessionId).state).toBe('stopping');
    await station.send(station.end(tx, 12_300, { timestamp: at(skew), reason: 'Remote' }));
    await h.settled(sessionId);
    h.settledOnce(sessionId, 2_300);
  });
});

describe.each(RAW_PROTOCOLS)('field sessions, a 22 kW connector: $name', (protocol) => {
  const h = harness({}, { chargers: testChargers(22) });

  it('a register jump no connector could deliver is held: no stop, not billed', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx } = await station.start(10_000);
    // 5 kWh within milliseconds (22 kW delivers 6 Wh a second): past the paid 2,424 Wh.
    await station.send(station.sample(tx, 15_000));
    await sleep(300);
    expect(station.stops).toEqual([]);
    expect(h.session(sessionId)).toMatchObject({ state: 'charging', last_meter_wh: 10_000 });
    // The stop register carries the same jump: not proven either; the last counted one stands.
    await station.send(station.end(tx, 15_000, { reason: 'EVDisconnected' }));
    await h.settled(sessionId);
    h.settledOnce(sessionId, 0);
    const held = h.t.logLines.filter((l) => l.includes('above what the connector can deliver'));
    expect(held.length).toBeGreaterThanOrEqual(2);
  });

  it('energy the connector could deliver in the time is counted', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx } = await station.start(10_000);
    await sleep(200);
    // 1 Wh in 200 ms: 18 kW, within 22 kW + 10%.
    await station.send(station.sample(tx, 10_001));
    expect(h.session(sessionId).last_meter_wh).toBe(10_001);
    await station.send(station.end(tx, 10_001, { reason: 'EVDisconnected' }));
    await h.settled(sessionId);
    h.settledOnce(sessionId, 1);
  });
});
