import { createHash, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../src/cli/offline/verify-ledger.js';
import {
  API_KEY,
  CHARGER_PASSWORD,
  DRIVERS,
  startTestGateway,
  type TestGateway,
} from './helpers/gateway.js';
import { mintToken, startSession } from './helpers/http.js';
import { createOperator, op } from './helpers/operator.js';
import { rawCharger, type RawClient } from './helpers/raw-charger.js';
import { waitUntil } from './helpers/wait.js';

/**
 * The paid limit handed to an OCPP 2.1 station (docs/ocpp.md "OCPP 2.1: the paid limit on the
 * station"), with raw-frame 2.1 stations over real sockets: the limit in the answer to the
 * accepting TransactionEvent, again until the station confirms it, a new one prompted with
 * TriggerMessage, the station's own end at its limit and which line stopped the session.
 */

const validator = (
  createRequire(import.meta.url)('ocpp-rpc/lib/standard-validators.js') as {
    subprotocol: string;
    validate(schemaId: string, params: unknown): unknown;
  }[]
).find((v) => v.subprotocol === 'ocpp2.1');

/** Throws unless the answer is a valid 2.1 TransactionEventResponse. */
function valid21(answer: unknown): TransactionEventAnswer {
  validator?.validate('urn:TransactionEventResponse', answer);
  return answer as TransactionEventAnswer;
}

interface TransactionEventAnswer {
  idTokenInfo?: { status: string };
  transactionLimit?: { maxEnergy?: number; maxCost?: number };
}

const METRICS_TOKEN = 'fmt_test_metrics_token_0000000000000000000021';
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

let t: TestGateway;
let operator: string;
const clients: RawClient[] = [];
beforeAll(async () => {
  t = await startTestGateway({ metrics: { bearerTokenSha256: sha256(METRICS_TOKEN) } });
  operator = createOperator(t.gw.db, 'otto', 'operator');
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close({ force: true })));
});
afterAll(async () => {
  await t.close();
});

interface RemoteStart {
  evseId: number;
  remoteStartId: number;
  idToken: { idToken: string; type: string };
}

/**
 * A raw 2.1 station on CP-1: records the gateway's remote starts, stops, triggers and tariffs,
 * answers the stops as told, and says whether it computes cost (TariffCostCtrlr.Enabled[Tariff]).
 */
async function station(o: { localCost?: boolean; stopReply?: string } = {}) {
  const cp = await rawCharger(t.gw.ocppUrl, 'CP-1', CHARGER_PASSWORD, ['ocpp2.1']);
  clients.push(cp);
  const remoteStarts: RemoteStart[] = [];
  const stops: string[] = [];
  const triggers: unknown[] = [];
  const tariffs: { transactionId: string; tariff: Record<string, unknown> }[] = [];
  cp.handle('GetVariables', async ({ params }) => {
    const { getVariableData } = params as {
      getVariableData: {
        component: { name: string };
        variable: { name: string; instance?: string };
      }[];
    };
    return {
      getVariableResult: getVariableData.map((d) => {
        const cost = d.component.name === 'TariffCostCtrlr' && d.variable.name === 'Enabled';
        return cost
          ? { attributeStatus: 'Accepted', attributeValue: String(o.localCost ?? false), ...d }
          : { attributeStatus: 'UnknownVariable', ...d };
      }),
    };
  });
  cp.handle('SetVariables', async ({ params }) => {
    const { setVariableData } = params as {
      setVariableData: { component: { name: string }; variable: { name: string } }[];
    };
    return {
      setVariableResult: setVariableData.map((d) => ({
        attributeStatus: 'Accepted',
        component: d.component,
        variable: d.variable,
      })),
    };
  });
  cp.handle('RequestStartTransaction', async ({ params }) => {
    remoteStarts.push(params as RemoteStart);
    return { status: 'Accepted' };
  });
  cp.handle('RequestStopTransaction', async ({ params }) => {
    stops.push((params as { transactionId: string }).transactionId);
    return { status: o.stopReply ?? 'Accepted' };
  });
  cp.handle('TriggerMessage', async ({ params }) => {
    triggers.push(params);
    return { status: 'Accepted' };
  });
  cp.handle('ChangeTransactionTariff', async ({ params }) => {
    tariffs.push(params as (typeof tariffs)[number]);
    return { status: 'Accepted' };
  });
  await cp.call('BootNotification', {
    reason: 'PowerUp',
    chargingStation: { vendorName: 'Acme', model: 'DC150-21', firmwareVersion: '2.1-test' },
  });
  for (const evseId of [1, 2]) {
    await cp.call('StatusNotification', {
      timestamp: now(),
      connectorStatus: 'Available',
      evseId,
      connectorId: 1,
    });
  }
  return { cp, remoteStarts, stops, triggers, tariffs };
}

const now = () => new Date().toISOString();

function register(wh: number, context = 'Sample.Periodic') {
  return [
    {
      timestamp: now(),
      sampledValue: [
        {
          value: wh,
          context,
          measurand: 'Energy.Active.Import.Register',
          unitOfMeasure: { unit: 'Wh' },
        },
      ],
    },
  ];
}

/** One transaction of the station, its events numbered as it sends them. */
function transaction(cp: RawClient, remote: RemoteStart) {
  const transactionId = randomUUID();
  let seqNo = 0;
  const frame = (
    eventType: 'Started' | 'Updated' | 'Ended',
    triggerReason: string,
    wh: number,
    extra: { info?: Record<string, unknown>; costDetails?: unknown } = {},
  ) => ({
    eventType,
    timestamp: now(),
    triggerReason,
    seqNo: seqNo++,
    transactionInfo: {
      transactionId,
      chargingState: eventType === 'Ended' ? 'EVConnected' : 'Charging',
      ...(eventType === 'Started' && { remoteStartId: remote.remoteStartId }),
      ...extra.info,
    },
    ...(eventType === 'Started' && {
      idToken: remote.idToken,
      evse: { id: remote.evseId, connectorId: 1 },
    }),
    meterValue: register(
      wh,
      eventType === 'Started'
        ? 'Transaction.Begin'
        : eventType === 'Ended'
          ? 'Transaction.End'
          : 'Sample.Periodic',
    ),
    ...(extra.costDetails !== undefined && { costDetails: extra.costDetails }),
  });
  const send = async (f: ReturnType<typeof frame>) => valid21(await cp.call('TransactionEvent', f));
  return { transactionId, frame, send };
}

/** A paid app session on CP-1 connector 1: 1,000 NGN, 2,424 Wh at 412.5 NGN/kWh. */
async function paidSession(s: Awaited<ReturnType<typeof station>>) {
  const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
  const res = await startSession(
    t.gw.url,
    token,
    { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email },
    1_000,
  );
  expect(res.status).toBe(200);
  return {
    sessionId: (res.body as { sessionId: string }).sessionId,
    remote: s.remoteStarts.at(-1) as RemoteStart,
  };
}

const sessionRow = (id: string) =>
  t.gw.db
    .prepare(
      'SELECT state, delivered_wh, cost, end_reason, stop_line, stop_line_gap_wh FROM sessions WHERE id = ?',
    )
    .get(id) as {
    state: string;
    delivered_wh: number | null;
    cost: number | null;
    end_reason: string | null;
    stop_line: string | null;
    stop_line_gap_wh: number | null;
  };

const notes = () =>
  (
    t.gw.db
      .prepare("SELECT note FROM ocpp_events WHERE charger_id = 'CP-1' ORDER BY seq")
      .all() as { note: string | null }[]
  ).map((e) => e.note);

function ledgerVerifies() {
  const report = verifyLedger(t.gw.db);
  expect(report.checks.filter((c) => c.violations.length > 0)).toEqual([]);
}

describe('OCPP 2.1: the paid limit on the station', () => {
  it('sends the paid energy with the accepting event, again until confirmed, and settles the station limit’s own end as the gateway bills it', async () => {
    const s = await station();
    const { sessionId, remote } = await paidSession(s);
    const tx = transaction(s.cp, remote);
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
    await waitUntil(() => sessionRow(sessionId).state === 'settled', 5000, 'settlement');
    expect(sessionRow(sessionId)).toEqual({
      state: 'settled',
      delivered_wh: 2400,
      cost: 990, // 2,400 Wh at 412.5 NGN/kWh, rounded down: the gateway's figure bills
      end_reason: 'EnergyLimitReached',
      stop_line: 'station_limit',
      stop_line_gap_wh: -24,
    });
    expect(s.stops).toEqual([]);
    ledgerVerifies();
    const story = (await op(t.gw.operatorUrl, operator, 'GET', `/sessions/${sessionId}`)).body as {
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
      await fetch(`${t.gw.operatorUrl}/metrics`, {
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      })
    ).text();
    expect(metrics).toMatch(/fleetgw_sessions_stopped_total\{line="station_limit"\} [1-9]/);
  });

  it('takes a CostLimitReached end whatever its stoppedReason, and notes a station that confirms another limit or none', async () => {
    const s = await station();
    const a = await paidSession(s);
    const txA = transaction(s.cp, a.remote);
    await txA.send(txA.frame('Started', 'RemoteStart', 0));
    await txA.send(
      txA.frame('Updated', 'LimitSet', 10, { info: { transactionLimit: { maxEnergy: 3000 } } }),
    );
    expect(notes()).toContain('station holds another limit than sent');
    await txA.send(
      txA.frame('Ended', 'CostLimitReached', 1_000, { info: { stoppedReason: 'Other' } }),
    );
    await waitUntil(() => sessionRow(a.sessionId).state === 'settled', 5000, 'settlement A');
    expect(sessionRow(a.sessionId)).toMatchObject({
      end_reason: 'CostLimitReached',
      stop_line: 'station_limit',
      stop_line_gap_wh: -1424,
    });

    const b = await paidSession(s);
    const txB = transaction(s.cp, b.remote);
    await txB.send(txB.frame('Started', 'RemoteStart', 0));
    await txB.send(
      txB.frame('Ended', 'EVDeparted', 500, { info: { stoppedReason: 'EVDisconnected' } }),
    );
    await waitUntil(() => sessionRow(b.sessionId).state === 'settled', 5000, 'settlement B');
    expect(notes()).toContain('station never confirmed the limit sent');
    expect(sessionRow(b.sessionId).stop_line).toBe('driver');
    ledgerVerifies();
  });

  it('lowers the station limit to the energy so far when it refuses the stop, prompting an event for it', async () => {
    const s = await station({ stopReply: 'Rejected' });
    const { sessionId, remote } = await paidSession(s);
    const tx = transaction(s.cp, remote);
    await tx.send(tx.frame('Started', 'RemoteStart', 5_000));
    await tx.send(
      tx.frame('Updated', 'LimitSet', 5_000, { info: { transactionLimit: { maxEnergy: 2424 } } }),
    );
    await tx.send(tx.frame('Updated', 'MeterValuePeriodic', 6_000));
    const stop = await op(t.gw.operatorUrl, operator, 'POST', `/sessions/${sessionId}/stop`);
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
    await waitUntil(() => sessionRow(sessionId).state === 'settled', 5000, 'settlement');
    // The operator asked first: the operator's line, whatever limit the station ended on.
    expect(sessionRow(sessionId)).toMatchObject({ delivered_wh: 1000, stop_line: 'operator' });
    ledgerVerifies();
  });

  it('says setTransactionLimit is not supported by a 2.0.1 station, and sends it nothing', async () => {
    const cp = await rawCharger(t.gw.ocppUrl, 'CP-AC', CHARGER_PASSWORD, ['ocpp2.0.1']);
    clients.push(cp);
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
      await t.gw.chargers.setTransactionLimit('CP-AC', 'tx-1', { energyWh: 10, costNgn: 5 }),
    ).toBe('not_supported');
    expect(calls.slice(sent)).not.toContain('TriggerMessage');
  });
});
