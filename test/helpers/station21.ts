import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { verifyLedger } from '../../src/cli/offline/verify-ledger.js';
import {
  API_KEY,
  CHARGER_PASSWORD,
  DRIVERS,
  startTestGateway,
  type TestGateway,
} from './gateway.js';
import { mintToken, startSession } from './http.js';
import { createOperator } from './operator.js';
import { rawCharger, type RawClient } from './raw-charger.js';

/**
 * A raw-frame OCPP 2.1 station on CP-1 for the paid limit and tariff tests (test/ocpp21-*.test.ts):
 * it records what the gateway asks of it and answers as told, and builds a transaction's
 * TransactionEvents with the gateway's answers checked against 2.1's schema.
 */

const validator = (
  createRequire(import.meta.url)('ocpp-rpc/lib/standard-validators.js') as {
    subprotocol: string;
    validate(schemaId: string, params: unknown): unknown;
  }[]
).find((v) => v.subprotocol === 'ocpp2.1');

/** Throws unless the answer is a valid 2.1 TransactionEventResponse. */
export function valid21(answer: unknown): TransactionEventAnswer {
  validator?.validate('urn:TransactionEventResponse', answer);
  return answer as TransactionEventAnswer;
}

export interface TransactionEventAnswer {
  idTokenInfo?: { status: string };
  transactionLimit?: { maxEnergy?: number; maxCost?: number };
}

export interface RemoteStart {
  evseId: number;
  /** Absent: the station started the transaction itself (a tap). */
  remoteStartId?: number;
  idToken: { idToken: string; type: string };
}

/**
 * A raw 2.1 station on CP-1: records the gateway's remote starts, stops, triggers and tariffs,
 * answers the stops as told, and says whether it computes cost (TariffCostCtrlr.Enabled[Tariff]).
 */
export async function station21(
  t: TestGateway,
  o: { localCost?: boolean; stopReply?: string } = {},
) {
  const cp = await rawCharger(t.gw.ocppUrl, 'CP-1', CHARGER_PASSWORD, ['ocpp2.1']);
  const remoteStarts: RemoteStart[] = [];
  const stops: string[] = [];
  const triggers: unknown[] = [];
  const tariffs: { transactionId: string; tariff: Record<string, unknown> }[] = [];
  /** Every device-model variable the gateway read, as `Component.Variable[instance]`. */
  const reads: string[] = [];
  cp.handle('GetVariables', async ({ params }) => {
    const { getVariableData } = params as {
      getVariableData: {
        component: { name: string };
        variable: { name: string; instance?: string };
      }[];
    };
    for (const d of getVariableData)
      reads.push(
        `${d.component.name}.${d.variable.name}${d.variable.instance ? `[${d.variable.instance}]` : ''}`,
      );
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
  return { cp, remoteStarts, stops, triggers, tariffs, reads };
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
export function transaction21(cp: RawClient, remote: RemoteStart) {
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
      ...(eventType === 'Started' &&
        remote.remoteStartId !== undefined && { remoteStartId: remote.remoteStartId }),
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
export async function paidSession21(t: TestGateway, s: Station21) {
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

export const sessionRow21 = (t: TestGateway, id: string) =>
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

export const notes21 = (t: TestGateway) =>
  (
    t.gw.db
      .prepare("SELECT note FROM ocpp_events WHERE charger_id = 'CP-1' ORDER BY seq")
      .all() as { note: string | null }[]
  ).map((e) => e.note);

export function ledgerVerifies(t: TestGateway) {
  const report = verifyLedger(t.gw.db);
  expect(report.checks.filter((c) => c.violations.length > 0)).toEqual([]);
}

export type Station21 = Awaited<ReturnType<typeof station21>>;

/**
 * A test file's gateway for raw 2.1 stations: started before its tests with an operator `otto`,
 * closed after them; `station` opens a raw 2.1 station on CP-1, closed after its test.
 */
export function station21Site(overrides: Parameters<typeof startTestGateway>[0] = {}) {
  const clients: RawClient[] = [];
  const site = {
    t: undefined as unknown as TestGateway,
    operator: '',
    async station(o: Parameters<typeof station21>[1] = {}): Promise<Station21> {
      const s = await station21(site.t, o);
      clients.push(s.cp);
      return s;
    },
    /** For a test's own raw client: closed after the test like the stations. */
    closeAfter(cp: RawClient): void {
      clients.push(cp);
    },
  };
  beforeAll(async () => {
    site.t = await startTestGateway(overrides);
    site.operator = createOperator(site.t.gw.db, 'otto', 'operator');
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close({ force: true })));
  });
  afterAll(async () => {
    await site.t.close();
  });
  return site;
}
