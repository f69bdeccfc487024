import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CHARGER_PASSWORD } from './helpers/gateway.js';
import { op } from './helpers/operator.js';
import { CARDS, TAP_WH, TAPS_CONFIG } from './helpers/tap-site.js';
import { IdTokenStore } from '../src/id-tokens/id-token-store.js';
import { rawCharger } from './helpers/raw-charger.js';
import {
  ledgerVerifies,
  notes21,
  paidSession21,
  sessionRow21,
  station21Site,
  transaction21,
} from './helpers/station21.js';
import { waitUntil } from './helpers/wait.js';

/**
 * The paid limit handed to an OCPP 2.1 station (docs/ocpp.md "OCPP 2.1: the paid limit on the
 * station"), with raw-frame 2.1 stations over real sockets: the limit in the answer to the
 * accepting TransactionEvent, again until the station confirms it, a new one prompted with
 * TriggerMessage, the station's own end at its limit and which line stopped the session.
 */

const METRICS_TOKEN = 'fmt_test_metrics_token_0000000000000000000021';
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

const site = station21Site({
  metrics: { bearerTokenSha256: sha256(METRICS_TOKEN) },
  taps: TAPS_CONFIG,
});
const station = site.station;

describe('OCPP 2.1: the paid limit on the station', () => {
  it('sends the paid energy with the accepting event, again until confirmed, and settles the station limit’s own end as the gateway bills it', async () => {
    const s = await station();
    const { sessionId, remote } = await paidSession21(site.t, s);
    const tx = transaction21(s.cp, remote);
    const started = tx.frame('Started', 'RemoteStart', 10_000);
    const first = await tx.send(started);
    expect(first.idTokenInfo?.status).toBe('Accepted');
    // No local cost: the paid energy alone, never maxCost.
    expect(first.transactionLimit).toEqual({ maxEnergy: 2424 });
    // A repeat of the accepting frame (a lost answer) gets the limit again.
    expect((await tx.send(started)).transactionLimit).toEqual({ maxEnergy: 2424 });
    // Not confirmed yet: every answer carries it.
    expect(
      (await tx.send(tx.frame('Updated', 'MeterValuePeriodic', 10_500))).transactionLimit,
    ).toEqual({ maxEnergy: 2424 });
    // Confirmed: no longer sent.
    const confirmed = await tx.send(
      tx.frame('Updated', 'LimitSet', 10_600, { info: { transactionLimit: { maxEnergy: 2424 } } }),
    );
    expect(confirmed.transactionLimit).toBeUndefined();
    expect(
      (await tx.send(tx.frame('Updated', 'MeterValuePeriodic', 11_000))).transactionLimit,
    ).toBeUndefined();
    // The station ends at its own limit, short of the gateway's paid-energy stop.
    await tx.send(
      tx.frame('Ended', 'EnergyLimitReached', 12_400, {
        info: { stoppedReason: 'EnergyLimitReached' },
      }),
    );
    await waitUntil(() => sessionRow21(site.t, sessionId).state === 'settled', 5000, 'settlement');
    expect(sessionRow21(site.t, sessionId)).toEqual({
      state: 'settled',
      delivered_wh: 2400,
      cost: 990, // 2,400 Wh at 412.5 NGN/kWh, rounded down: the gateway's figure bills
      end_reason: 'EnergyLimitReached',
      stop_line: 'station_limit',
      stop_line_gap_wh: -24,
    });
    expect(s.stops).toEqual([]);
    ledgerVerifies(site.t);
    // The uplink's settled event says which line stopped it (schemas/mqtt/session.json).
    const events = site.t.gw.db
      .prepare("SELECT payload FROM outbox WHERE topic = 'sessions' AND payload LIKE ?")
      .all(`%${sessionId}%`) as { payload: string }[];
    const payloads = events.map((e) => JSON.parse(e.payload) as Record<string, unknown>);
    expect(payloads).toContainEqual(
      expect.objectContaining({ state: 'settled', stopLine: 'station_limit', cost: 990 }),
    );
    const story = (await op(site.t.gw.operatorUrl, site.operator, 'GET', `/sessions/${sessionId}`))
      .body as {
      stoppedBy: { by: string; line: string; gapWh: number; words: string };
      stationChecks: { limit: Record<string, unknown>; costDifferences: unknown[] };
    };
    expect(story.stoppedBy).toMatchObject({
      by: 'station_limit',
      line: 'station_limit',
      gapWh: -24,
    });
    expect(story.stoppedBy.words).toContain('24 Wh short of the paid energy');
    expect(story.stationChecks.limit).toMatchObject({
      energyWh: 2424,
      sentEnergyWh: 2424,
      confirmedEnergyWh: 2424,
      tariffStatus: null,
    });
    const metrics = await (
      await fetch(`${site.t.gw.operatorUrl}/metrics`, {
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      })
    ).text();
    expect(metrics).toMatch(/fleetgw_sessions_stopped_total\{line="station_limit"\} [1-9]/);
  });

  it('takes a CostLimitReached end whatever its stoppedReason, and notes a station that confirms another limit or none', async () => {
    const s = await station();
    const a = await paidSession21(site.t, s);
    const txA = transaction21(s.cp, a.remote);
    await txA.send(txA.frame('Started', 'RemoteStart', 0));
    await txA.send(
      txA.frame('Updated', 'LimitSet', 10, { info: { transactionLimit: { maxEnergy: 3000 } } }),
    );
    expect(notes21(site.t)).toContain('station holds another limit than sent');
    await txA.send(
      txA.frame('Ended', 'CostLimitReached', 1_000, { info: { stoppedReason: 'Other' } }),
    );
    await waitUntil(
      () => sessionRow21(site.t, a.sessionId).state === 'settled',
      5000,
      'settlement A',
    );
    expect(sessionRow21(site.t, a.sessionId)).toMatchObject({
      end_reason: 'CostLimitReached',
      stop_line: 'station_limit',
      stop_line_gap_wh: -1424,
    });

    const b = await paidSession21(site.t, s);
    const txB = transaction21(s.cp, b.remote);
    await txB.send(txB.frame('Started', 'RemoteStart', 0));
    await txB.send(
      txB.frame('Ended', 'EVDeparted', 500, { info: { stoppedReason: 'EVDisconnected' } }),
    );
    await waitUntil(
      () => sessionRow21(site.t, b.sessionId).state === 'settled',
      5000,
      'settlement B',
    );
    expect(notes21(site.t)).toContain('station never confirmed the limit sent');
    expect(sessionRow21(site.t, b.sessionId).stop_line).toBe('driver');
    ledgerVerifies(site.t);
  });

  it('lowers the station limit to the energy so far when it refuses the stop, prompting an event for it', async () => {
    const s = await station({ stopReply: 'Rejected' });
    const { sessionId, remote } = await paidSession21(site.t, s);
    const tx = transaction21(s.cp, remote);
    await tx.send(tx.frame('Started', 'RemoteStart', 5_000));
    await tx.send(
      tx.frame('Updated', 'LimitSet', 5_000, { info: { transactionLimit: { maxEnergy: 2424 } } }),
    );
    await tx.send(tx.frame('Updated', 'MeterValuePeriodic', 6_000));
    const stop = await op(
      site.t.gw.operatorUrl,
      site.operator,
      'POST',
      `/sessions/${sessionId}/stop`,
    );
    expect(stop.status).toBeLessThan(300);
    await waitUntil(() => s.triggers.length > 0, 10_000, 'TriggerMessage');
    expect(s.triggers[0]).toEqual({ requestedMessage: 'TransactionEvent', evse: { id: 1 } });
    // The triggered event's answer carries the lowered limit: what was delivered so far.
    const triggered = await tx.send(tx.frame('Updated', 'Trigger', 6_000));
    expect(triggered.transactionLimit).toEqual({ maxEnergy: 1000 });
    await tx.send(
      tx.frame('Updated', 'LimitSet', 6_000, { info: { transactionLimit: { maxEnergy: 1000 } } }),
    );
    await tx.send(
      tx.frame('Ended', 'EnergyLimitReached', 6_000, {
        info: { stoppedReason: 'EnergyLimitReached' },
      }),
    );
    await waitUntil(() => sessionRow21(site.t, sessionId).state === 'settled', 5000, 'settlement');
    // The operator asked first: the operator's line, whatever limit the station ended on.
    expect(sessionRow21(site.t, sessionId)).toMatchObject({
      delivered_wh: 1000,
      stop_line: 'operator',
    });
    ledgerVerifies(site.t);
  });

  it('sends a card’s tap start its paid energy too, and again on the repeated frame', async () => {
    const s = await station();
    const { db } = site.t.gw;
    new IdTokenStore(db).bind({ ...CARDS.ada, source: 'operator' }, new Date().toISOString());
    const tap = { evseId: 2, idToken: { idToken: CARDS.ada.value, type: CARDS.ada.type } };
    const tx = transaction21(s.cp, tap);
    const started = tx.frame('Started', 'Authorized', 3_000);
    const first = await tx.send(started);
    expect(first).toMatchObject({
      idTokenInfo: { status: 'Accepted' },
      transactionLimit: { maxEnergy: TAP_WH },
    });
    expect((await tx.send(started)).transactionLimit).toEqual({ maxEnergy: TAP_WH });
    await tx.send(tx.frame('Ended', 'StopAuthorized', 4_000, { info: { stoppedReason: 'Local' } }));
    const row = db
      .prepare("SELECT state, stop_line FROM sessions WHERE origin = 'card' AND connector_id = '2'")
      .get() as { state: string; stop_line: string };
    expect(row).toEqual({ state: 'settled', stop_line: 'driver' });
    ledgerVerifies(site.t);
  });

  it('says setTransactionLimit is not supported by a 2.0.1 station, and sends it nothing', async () => {
    const cp = await rawCharger(site.t.gw.ocppUrl, 'CP-AC', CHARGER_PASSWORD, ['ocpp2.0.1']);
    site.closeAfter(cp);
    const calls: string[] = [];
    cp.handle(async ({ method }) => {
      calls.push(String(method));
      return { status: 'Accepted' };
    });
    await cp.call('BootNotification', {
      reason: 'PowerUp',
      chargingStation: { vendorName: 'Acme', model: 'AC22', firmwareVersion: '2.0.1-test' },
    });
    const sent = calls.length;
    expect(
      await site.t.gw.chargers.setTransactionLimit('CP-AC', 'tx-1', { energyWh: 10, costNgn: 5 }),
    ).toBe('not_supported');
    expect(calls.slice(sent)).not.toContain('TriggerMessage');
  });
});
