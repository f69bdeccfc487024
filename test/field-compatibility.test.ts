import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../src/cli/offline/verify-ledger.js';
import { IdTokenStore, type IdTokenType } from '../src/id-tokens/id-token-store.js';
import {
  API_KEY,
  CHARGER_PASSWORD,
  DRIVERS,
  startTestGateway,
  UNPHYSICAL_KW,
  testConfig,
  type TestGateway,
} from './helpers/gateway.js';
import { errorCode, mintToken, startSession } from './helpers/http.js';
import { rawCharger, type RawClient } from './helpers/raw-charger.js';
import {
  raw16,
  raw201,
  type Frame,
  type RawProtocol,
  type RawStation,
  type StationTx,
} from './helpers/raw-stations.js';
import { waitUntil } from './helpers/wait.js';

/**
 * What real chargers send, one row of docs/field-compatibility.md each: the deviation as the
 * linked report shows it, sent as raw frames over a real socket, and what the gateway must make
 * of it. Every session row ends in one settlement on the energy the charger proved.
 */

const AMOUNT = 1_000;
const PRICE = 412_500; // micro-NGN per Wh (dc tariff)
const cost = (wh: number) => Math.min(AMOUNT, Math.floor((wh * PRICE) / 1_000_000));
const at = (iso: string) => iso; // a timestamp the charger wrote, as it wrote it
const nowNoMs = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

interface SessionRow {
  state: string;
  delivered_wh: number | null;
  cost: number | null;
  last_meter_wh: number | null;
}

interface Harness {
  t: TestGateway;
  /** A booted raw station on its own charger (one per row, so rows cannot disturb each other). */
  station(protocol: RawProtocol, id: string): Promise<RawStation>;
  /** A paid session on connector 1 of `id`, remote start accepted by the station. */
  paid(station: RawStation, id: string): Promise<string>;
  session(id: string): SessionRow;
  settled(id: string, deliveredWh: number): Promise<void>;
  meterReached(id: string, wh: number): Promise<void>;
  deviations(chargerId: string): string[];
  notes(chargerId: string): string[];
  metering(chargerId: string): { measurands: string; energy: string } | undefined;
}

interface Row {
  name: string;
  run(h: Harness, chargerId: string): Promise<void>;
}

/** 1.6: start at 10,000 Wh, one sample, stop at 12,000 Wh; `shape` rewrites frames before they go out. */
async function session16(
  h: Harness,
  id: string,
  shape: { start?: (f: Frame) => void; sample?: (f: Frame) => void; end?: (f: Frame) => void },
  o: { sampleWh?: number; expectWh?: number } = {},
): Promise<void> {
  const station = await h.station(raw16, id);
  const sessionId = await h.paid(station, id);
  const remote = station.remoteStarts.at(-1) as { connector: number; idToken: string };
  const start: Frame = {
    action: 'StartTransaction',
    params: {
      connectorId: remote.connector,
      idTag: remote.idToken,
      meterStart: 10_000,
      timestamp: new Date().toISOString(),
    },
  };
  shape.start?.(start);
  const reply = (await station.send(start)) as { transactionId: number };
  const tx: StationTx = {
    ref: String(reply.transactionId),
    connector: remote.connector,
    idToken: remote.idToken,
  };
  const sample = station.sample(tx, o.sampleWh ?? 11_000);
  shape.sample?.(sample);
  await station.send(sample);
  await h.meterReached(sessionId, o.sampleWh ?? 11_000);
  const end = station.end(tx, 12_000);
  shape.end?.(end);
  await station.send(end);
  await h.settled(sessionId, o.expectWh ?? 2_000);
}

/** 2.0.1: the same session through TransactionEvents. */
async function session201(
  h: Harness,
  id: string,
  shape: { start?: (f: Frame) => void; sample?: (f: Frame) => void; end?: (f: Frame) => void },
): Promise<void> {
  const station = await h.station(raw201, id);
  const sessionId = await h.paid(station, id);
  const remote = station.remoteStarts.at(-1) as {
    connector: number;
    idToken: string;
    remoteStartId: number;
  };
  const tx: StationTx = {
    ref: `tx-${id}`,
    connector: remote.connector,
    idToken: remote.idToken,
  };
  const start: Frame = {
    action: 'TransactionEvent',
    params: {
      eventType: 'Started',
      timestamp: new Date().toISOString(),
      triggerReason: 'RemoteStart',
      seqNo: 0,
      transactionInfo: {
        transactionId: tx.ref,
        chargingState: 'Charging',
        remoteStartId: remote.remoteStartId,
      },
      idToken: { idToken: remote.idToken, type: 'Central' },
      evse: { id: remote.connector, connectorId: 1 },
      meterValue: [
        {
          timestamp: new Date().toISOString(),
          sampledValue: [
            {
              value: 10_000,
              context: 'Transaction.Begin',
              measurand: 'Energy.Active.Import.Register',
              unitOfMeasure: { unit: 'Wh' },
            },
          ],
        },
      ],
    },
  };
  shape.start?.(start);
  await station.send(start);
  const sample = station.sample(tx, 11_000);
  (sample.params as { seqNo: number }).seqNo = 1;
  shape.sample?.(sample);
  await station.send(sample);
  await h.meterReached(sessionId, 11_000);
  const end = station.end(tx, 12_000);
  (end.params as { seqNo: number }).seqNo = 2;
  shape.end?.(end);
  await station.send(end);
  await h.settled(sessionId, 2_000);
}

type Params = Record<string, unknown>;
const p = (f: Frame) => f.params;
const sampled = (f: Frame, i = 0): Params[] =>
  ((p(f).meterValue ?? p(f).transactionData) as { sampledValue: Params[] }[])[i]
    ?.sampledValue as Params[];

/** A raw 1.6 charger answering the gateway's configuration calls as `answers` says. */
async function configuredCharger(
  h: Harness,
  id: string,
  answers: {
    change(key: string, value: string): Record<string, unknown>;
    get(keys: string[]): Record<string, unknown>;
  },
): Promise<{ cp: RawClient; changes: [string, string][] }> {
  const cp = await rawCharger(h.t.gw.ocppUrl, id, CHARGER_PASSWORD);
  const changes: [string, string][] = [];
  cp.handle('ChangeConfiguration', async ({ params }) => {
    const { key, value } = params as { key: string; value: string };
    changes.push([key, value]);
    return answers.change(key, value);
  });
  cp.handle('GetConfiguration', async ({ params }) =>
    answers.get((params as { key?: string[] }).key ?? []),
  );
  await cp.call('BootNotification', { chargePointVendor: 'Field', chargePointModel: 'X' });
  await cp.call('StatusNotification', {
    connectorId: 1,
    errorCode: 'NoError',
    status: 'Available',
  });
  return { cp, changes };
}

const KWH_REGISTER = 'Energy.Active.Import.Register';

/** The energy AMOUNT pays for at the dc tariff: the stop is due this far past the start. */
const PAID_WH = 2_424;

/**
 * A charger that meters both sides and lists the grid side (Inlet) first: `inletWh` is that
 * meter's own count; the Outlet one is `outletWh`. 1.6 values are strings, 2.0.1 numbers.
 */
function inletFirst(
  protocol: RawProtocol,
  inletWh: number,
  outletWh: number,
  context: string,
): Params[] {
  const v = (value: number, location: string) =>
    protocol === raw16
      ? { value: String(value), context, measurand: KWH_REGISTER, location, unit: 'Wh' }
      : { value, context, measurand: KWH_REGISTER, location, unitOfMeasure: { unit: 'Wh' } };
  return [v(inletWh, 'Inlet'), v(outletWh, 'Outlet')];
}

/**
 * Start at 10,000 Wh (Outlet), one sample at the paid energy, which must stop the session, and the
 * end there; every meter value lists an Inlet register (`inlet` of the Outlet one) first.
 */
async function inletListedFirst(
  h: Harness,
  id: string,
  protocol: RawProtocol,
  inlet: (outletWh: number) => number,
): Promise<void> {
  const station = await h.station(protocol, id);
  const sessionId = await h.paid(station, id);
  const listed = (f: Frame, outletWh: number, context: string) => {
    const mv = ((p(f).meterValue ?? p(f).transactionData) as Params[])[0]!;
    mv.sampledValue = inletFirst(protocol, inlet(outletWh), outletWh, context);
  };
  let tx: StationTx;
  if (protocol === raw16) {
    ({ tx } = await station.start(10_000));
  } else {
    // The Started event is built here, so that its Transaction.Begin register lists both.
    const remote = station.remoteStarts.at(-1) as { connector: number; idToken: string };
    tx = { ref: `tx-${id}`, connector: remote.connector, idToken: remote.idToken };
    const start = station.sample(tx, 10_000);
    Object.assign(p(start), {
      eventType: 'Started',
      triggerReason: 'RemoteStart',
      idToken: { idToken: remote.idToken, type: 'Central' },
      evse: { id: remote.connector, connectorId: 1 },
    });
    listed(start, 10_000, 'Transaction.Begin');
    await station.send(start);
  }
  const sample = station.sample(tx, 10_000 + PAID_WH);
  listed(sample, 10_000 + PAID_WH, 'Sample.Periodic');
  await station.send(sample);
  await h.meterReached(sessionId, 10_000 + PAID_WH);
  await waitUntil(() => station.stops.includes(tx.ref), 5000, 'stop at the paid energy');
  const end = station.end(tx, 10_000 + PAID_WH, { reason: 'Remote' });
  listed(end, 10_000 + PAID_WH, 'Transaction.End');
  await station.send(end);
  await h.settled(sessionId, PAID_WH);
  expect(h.deviations(id)).not.toContain('MeterValue sampledValue[].location energy_not_at_outlet');
}

/** Rows whose handling is the OCPP edge's; field-session's rows are in the table only. */
const ROWS: Row[] = [
  {
    name: '1.6 sampledValue.value as a JSON number (OpenEVSE)',
    run: (h, id) =>
      session16(h, id, {
        sample: (f) => {
          for (const v of sampled(f)) v.value = Number(v.value);
        },
      }).then(() =>
        expect(h.deviations(id)).toContain(
          'MeterValues meterValue[].sampledValue[].value number_as_string',
        ),
      ),
  },
  {
    name: '1.6 sampledValue.value as a decimal JSON number (OpenEVSE via Home Assistant)',
    run: (h, id) =>
      session16(
        h,
        id,
        {
          sample: (f) => {
            for (const v of sampled(f)) v.value = 11_000.4;
          },
        },
        { sampleWh: 11_000 },
      ),
  },
  {
    name: '1.6 StopTransaction.transactionData values as JSON numbers (ArduinoOcpp)',
    run: (h, id) =>
      session16(h, id, {
        end: (f) => {
          for (const v of sampled(f)) v.value = 12_000;
        },
      }).then(() =>
        expect(h.deviations(id)).toContain(
          'StopTransaction transactionData[].sampledValue[].value number_as_string',
        ),
      ),
  },
  {
    name: '1.6 unit in lower case (kwh) in MeterValues and StopTransaction',
    run: (h, id) =>
      session16(h, id, {
        sample: (f) => {
          for (const v of sampled(f)) Object.assign(v, { value: '11', unit: 'kwh' });
        },
        end: (f) => {
          for (const v of sampled(f)) Object.assign(v, { value: '12', unit: 'KWH' });
        },
      }).then(() =>
        expect(h.deviations(id)).toContain(
          'MeterValues meterValue[].sampledValue[].unit enum_case',
        ),
      ),
  },
  {
    name: '1.6 decimal meterStart and meterStop (fractional-Wh registers, KEBA)',
    run: (h, id) =>
      session16(h, id, {
        start: (f) => {
          p(f).meterStart = 10_000.4;
        },
        end: (f) => {
          p(f).meterStop = 11_999.6;
        },
      }).then(() =>
        expect(h.deviations(id)).toContain('StartTransaction meterStart decimal_integer'),
      ),
  },
  {
    name: '1.6 vendor-specific StopTransaction reason: taken as Other, raw kept',
    run: async (h, id) => {
      await session16(h, id, {
        end: (f) => {
          p(f).reason = 'EVDisconnectedByUser';
        },
      });
      const row = h.t.gw.db
        .prepare('SELECT stop_reason FROM ocpp16_transactions WHERE charger_id = ?')
        .get(id) as { stop_reason: string };
      expect(row.stop_reason).toBe('Other');
      const dev = h.t.gw.db
        .prepare('SELECT example FROM charger_deviations WHERE charger_id = ? AND kind = ?')
        .get(id, 'StopTransaction reason unknown_enum') as { example: string };
      expect(JSON.parse(dev.example)).toBe('EVDisconnectedByUser');
    },
  },
  {
    name: '1.6 StopTransaction with fields the schema does not know (connectorId, disconnectReason)',
    run: (h, id) =>
      session16(h, id, {
        end: (f) => {
          Object.assign(p(f), { connectorId: 1, disconnectReason: 'EVDisconnected' });
        },
      }).then(() =>
        expect(h.deviations(id)).toContain('StopTransaction disconnectReason unknown_field'),
      ),
  },
  {
    name: '1.6 timestamps without a time zone (Growatt THOR)',
    run: (h, id) =>
      session16(h, id, {
        start: (f) => {
          p(f).timestamp = nowNoMs().replace('Z', '');
        },
        sample: (f) => {
          (p(f).meterValue as Params[])[0]!.timestamp = nowNoMs().replace('Z', '');
        },
      }).then(() =>
        expect(h.deviations(id)).toContain('StartTransaction timestamp timestamp_without_zone'),
      ),
  },
  {
    name: '1.6 timestamp offset in whole hours without minutes ("+02")',
    run: async (h, id) => {
      await session16(h, id, {
        start: (f) => {
          p(f).timestamp = at('2024-04-26T14:35:02+02');
        },
      });
      const row = h.t.gw.db
        .prepare('SELECT started_at FROM ocpp16_transactions WHERE charger_id = ?')
        .get(id) as { started_at: string };
      expect(row.started_at).toBe('2024-04-26T12:35:02.000Z');
    },
  },
  {
    name: '1.6 periodic MeterValues that also carry the Transaction.Begin register (Growatt THOR 22AS)',
    run: (h, id) =>
      session16(h, id, {
        sample: (f) => {
          const mv = (p(f).meterValue as Params[])[0]!;
          mv.timestamp = new Date().toISOString().replace('Z', '+00:00');
          (mv.sampledValue as Params[]).unshift({
            value: '10000',
            context: 'Transaction.Begin',
            measurand: KWH_REGISTER,
            unit: 'Wh',
          });
        },
      }),
  },
  {
    name: '1.6 StatusNotification errorCode outside the enumeration ("Error")',
    run: async (h, id) => {
      const station = await h.station(raw16, id);
      await station.send({
        action: 'StatusNotification',
        params: { connectorId: 1, errorCode: 'Error', status: 'Faulted' },
      });
      const row = h.t.gw.db
        .prepare(
          'SELECT status, error_code FROM connector_state WHERE charger_id = ? AND connector_id = ?',
        )
        .get(id, '1') as { status: string; error_code: string };
      expect(row).toEqual({ status: 'faulted', error_code: 'OtherError' });
    },
  },
  {
    name: '1.6 StatusNotification info: null',
    run: async (h, id) => {
      const station = await h.station(raw16, id);
      const frame = station.status(1, 'Available');
      p(frame).info = null;
      await expect(station.send(frame)).resolves.toEqual({});
      expect(h.deviations(id)).toContain('StatusNotification info null_field');
    },
  },
  {
    name: '1.6 sampledValue.context outside the enumeration (Alfen Eve Pro)',
    run: (h, id) =>
      session16(h, id, {
        sample: (f) => {
          for (const v of sampled(f)) v.context = 'Sample.Periodical';
        },
      }),
  },
  {
    name: '1.6 sampled value in a unit the schema does not know (Hz, ChargeAmps Halo)',
    run: (h, id) =>
      session16(h, id, {
        sample: (f) => {
          sampled(f).push({ value: '50', measurand: 'Frequency', unit: 'Hz' });
        },
      }).then(() =>
        expect(h.deviations(id)).toContain(
          'MeterValues meterValue[].sampledValue[] unreadable_element_dropped',
        ),
      ),
  },
  {
    name: '1.6 MeterValues without transactionId during a transaction (clock-aligned)',
    run: (h, id) =>
      session16(h, id, {
        sample: (f) => {
          delete p(f).transactionId;
        },
      }),
  },
  {
    name: '1.6 MeterValues on connector 0 during a transaction (whole-charger meter)',
    run: (h, id) =>
      session16(h, id, {
        sample: (f) => {
          p(f).connectorId = 0;
        },
      }),
  },
  {
    name: '1.6 MeterValues with transactionId 0 and the register in kWh',
    run: (h, id) =>
      session16(h, id, {
        sample: (f) => {
          p(f).transactionId = 0;
          for (const v of sampled(f)) Object.assign(v, { value: '11.000', unit: 'kWh' });
        },
      }),
  },
  {
    name: '1.6 Inlet register listed before the Outlet one: the Outlet is read, the stop comes at the paid energy',
    // The grid-side meter counts on its own (below meterStart): read, it never reached the limit.
    run: (h, id) => inletListedFirst(h, id, raw16, () => 5_300),
  },
  {
    name: '2.0.1 Inlet register listed before the Outlet one: the Outlet is read and billed',
    // The grid side includes the charger's losses: read, it billed 6 % more than delivered.
    run: (h, id) => inletListedFirst(h, id, raw201, (wh) => Math.round(wh * 1.06)),
  },
  {
    name: '1.6 only an Inlet register: read there, counted',
    run: (h, id) =>
      session16(h, id, {
        sample: (f) => {
          for (const v of sampled(f)) v.location = 'Inlet';
        },
      }).then(() =>
        expect(h.deviations(id)).toContain(
          'MeterValue sampledValue[].location energy_not_at_outlet',
        ),
      ),
  },
  {
    name: '1.6 grid-side (Inlet) meter on connector 0 during a transaction: not the transaction register',
    run: async (h, id) => {
      const station = await h.station(raw16, id);
      const sessionId = await h.paid(station, id);
      const { tx } = await station.start(10_000);
      await station.send({
        action: 'MeterValues',
        params: {
          connectorId: 0,
          meterValue: [
            {
              timestamp: new Date().toISOString(),
              sampledValue: [
                { value: '50000', context: 'Sample.Clock', location: 'Inlet', unit: 'Wh' },
              ],
            },
          ],
        },
      });
      await station.send(station.sample(tx, 11_000));
      await h.meterReached(sessionId, 11_000);
      await station.send(station.end(tx, 12_000));
      await h.settled(sessionId, 2_000);
    },
  },
  {
    name: '2.0.1 MeterValues during a transaction: the EVSE transaction register moves, and stops',
    run: async (h, id) => {
      const station = await h.station(raw201, id);
      const sessionId = await h.paid(station, id);
      const { tx } = await station.start(10_000);
      const meterValues = (evseId: number, wh: number, soc: number, msAgo = 0): Frame => ({
        action: 'MeterValues',
        params: {
          evseId,
          meterValue: [
            {
              timestamp: new Date(Date.now() - msAgo).toISOString(),
              sampledValue: [
                { value: wh, context: 'Sample.Clock', measurand: KWH_REGISTER, location: 'Outlet' },
                { value: soc, context: 'Sample.Clock', measurand: 'SoC', location: 'EV' },
              ],
            },
          ],
        },
      });
      const soc = () =>
        (
          h.t.gw.db
            .prepare('SELECT soc_percent FROM connector_state WHERE charger_id = ?')
            .get(id) as { soc_percent: number | null } | undefined
        )?.soc_percent;
      // The station's own meter (evseId 0) is no connector's register.
      await station.send(meterValues(0, 11_000, 30));
      await station.send(meterValues(tx.connector, 10_000 + PAID_WH, 55));
      await h.meterReached(sessionId, 10_000 + PAID_WH);
      await waitUntil(() => station.stops.includes(tx.ref), 5000, 'stop at the paid energy');
      // No offline flag in MeterValues: stamped 10 minutes ago, it was queued and is history.
      await station.send(meterValues(tx.connector, 10_000 + PAID_WH, 20, 600_000));
      expect(soc()).toBe(55);
      await station.send(station.end(tx, 10_000 + PAID_WH, { reason: 'Remote' }));
      await h.settled(sessionId, PAID_WH);
    },
  },
  {
    name: '1.6 StopTransaction with transactionId -1 and no idTag (go-eCharger)',
    run: (h, id) =>
      session16(h, id, {
        end: (f) => {
          p(f).transactionId = -1;
        },
      }),
  },
  {
    name: '1.6 Energy.Active.Import.Interval only, no register',
    run: async (h, id) => {
      const station = await h.station(raw16, id);
      const sessionId = await h.paid(station, id);
      const { tx } = await station.start(10_000);
      const interval = (wh: number, minutesAgo: number): Frame => ({
        action: 'MeterValues',
        params: {
          connectorId: tx.connector,
          transactionId: Number(tx.ref),
          meterValue: [
            {
              timestamp: new Date(Date.now() - minutesAgo * 1000).toISOString(),
              sampledValue: [
                { value: String(wh), measurand: 'Energy.Active.Import.Interval', unit: 'Wh' },
              ],
            },
          ],
        },
      });
      await station.send(interval(600, 3));
      const second = interval(400, 2);
      await station.send(second);
      await station.send(second); // sent again after a lost reply: adds nothing
      await h.meterReached(sessionId, 11_000);
      await station.send(station.end(tx, 11_500));
      await h.settled(sessionId, 1_500);
    },
  },
  {
    name: '1.6 over-long BootNotification firmwareVersion is cut, the boot accepted',
    run: async (h, id) => {
      const cp = await rawCharger(h.t.gw.ocppUrl, id, CHARGER_PASSWORD);
      try {
        const boot = (await cp.call('BootNotification', {
          chargePointVendor: 'Field',
          chargePointModel: 'X',
          firmwareVersion: 'V1.5@25238bf+100,F8.gl,ws,ESP32,RN8213@V31-build-2025-04-18',
        })) as { status: string };
        expect(boot.status).toBe('Accepted');
        expect(h.deviations(id)).toContain('BootNotification firmwareVersion string_too_long');
      } finally {
        await cp.close({ force: true });
      }
    },
  },
  {
    name: '1.6 measurand list Rejected (too many for the charger): register alone, read back',
    run: async (h, id) => {
      const { cp, changes } = await configuredCharger(h, id, {
        change: (key, value) => ({
          status: key === 'MeterValuesSampledData' && value.includes(',') ? 'Rejected' : 'Accepted',
        }),
        get: () => ({
          configurationKey: [
            { key: 'MeterValuesSampledData', readonly: false, value: KWH_REGISTER },
          ],
        }),
      });
      try {
        await waitUntil(() => h.metering(id), 5000, 'metering recorded');
        expect(changes).toContainEqual(['MeterValuesSampledData', KWH_REGISTER]);
        expect(h.metering(id)).toEqual({ measurands: KWH_REGISTER, energy: 'register' });
      } finally {
        await cp.close({ force: true });
      }
    },
  },
  {
    name: '1.6 measurand list answered with a CALLERROR (SoC not supported): register alone',
    run: async (h, id) => {
      const { cp, changes } = await configuredCharger(h, id, {
        change: (key, value) => {
          if (key === 'MeterValuesSampledData' && value.includes('SoC')) {
            throw Object.assign(new Error('SoC not supported'), { rpcErrorCode: 'NotSupported' });
          }
          return { status: 'Accepted' };
        },
        get: () => ({ configurationKey: [], unknownKey: ['MeterValuesSampledData'] }),
      });
      try {
        await waitUntil(() => h.metering(id), 5000, 'metering recorded');
        expect(changes).toContainEqual(['MeterValuesSampledData', KWH_REGISTER]);
        expect(h.metering(id)?.energy).toBe('register');
      } finally {
        await cp.close({ force: true });
      }
    },
  },
  {
    name: '1.6 measurand list accepted but not applied (read back: Voltage only): Start refused 409 charger_unmetered',
    run: async (h, id) => {
      const { cp } = await configuredCharger(h, id, {
        change: () => ({ status: 'Accepted' }),
        get: () => ({
          configurationKey: [{ key: 'MeterValuesSampledData', readonly: false, value: 'Voltage' }],
        }),
      });
      try {
        await waitUntil(() => h.metering(id), 5000, 'metering recorded');
        const token = await mintToken(h.t.gw.url, API_KEY, DRIVERS.ada.email);
        const res = await startSession(
          h.t.gw.url,
          token,
          { chargerId: id, connectorId: '1', driverEmail: DRIVERS.ada.email },
          AMOUNT,
        );
        expect(res.status).toBe(409);
        expect(errorCode(res)).toBe('charger_unmetered');
        const debits = h.t.gw.db
          .prepare('SELECT count(*) AS n FROM sessions WHERE charger_id = ?')
          .get(id) as { n: number };
        expect(debits.n).toBe(0);
      } finally {
        await cp.close({ force: true });
      }
    },
  },
  {
    name: '1.6 GetConfiguration reply with readonly as a string',
    run: async (h, id) => {
      const { cp } = await configuredCharger(h, id, {
        change: () => ({ status: 'Accepted' }),
        get: () => ({
          configurationKey: [
            { key: 'MeterValuesSampledData', readonly: 'false', value: `${KWH_REGISTER},SoC` },
          ],
        }),
      });
      try {
        await waitUntil(() => h.metering(id), 5000, 'metering recorded');
        expect(h.metering(id)?.measurands).toBe(`${KWH_REGISTER},SoC`);
        expect(h.deviations(id)).toContain(
          'GetConfiguration.conf configurationKey[].readonly string_as_boolean',
        );
      } finally {
        await cp.close({ force: true });
      }
    },
  },
  {
    name: '1.6 RemoteStartTransaction reply with a vendor field and status in lower case',
    run: async (h, id) => {
      const station = await h.station(raw16, id);
      station.cp.handle('RemoteStartTransaction', async ({ params }) => {
        const q = params as { connectorId: number; idTag: string };
        station.remoteStarts.push({ connector: q.connectorId, idToken: q.idTag });
        return { status: 'accepted', vendorReason: 'queued' };
      });
      const sessionId = await h.paid(station, id);
      expect(h.session(sessionId).state).not.toBe('refunded');
      expect(h.deviations(id)).toEqual(
        expect.arrayContaining([
          'RemoteStartTransaction.conf status enum_case',
          'RemoteStartTransaction.conf vendorReason unknown_field',
        ]),
      );
    },
  },
  {
    name: '1.6 StopTransaction that cannot be understood is still answered and recorded',
    run: async (h, id) => {
      const station = await h.station(raw16, id);
      await expect(
        station.send({ action: 'StopTransaction', params: { meterStop: 'lots', timestamp: 'x' } }),
      ).resolves.toEqual({});
      expect(h.notes(id).some((n) => n.startsWith('StopTransaction: not understood'))).toBe(true);
    },
  },
  {
    name: '2.0.1 unitOfMeasure.unit in upper case (KWH)',
    run: (h, id) =>
      session201(h, id, {
        sample: (f) => {
          for (const v of sampled(f))
            Object.assign(v, { value: 11, unitOfMeasure: { unit: 'KWH' } });
        },
      }).then(() =>
        expect(h.deviations(id)).toContain(
          'TransactionEvent meterValue[].sampledValue[].unitOfMeasure.unit unit_case',
        ),
      ),
  },
  {
    name: '2.0.1 remoteStartId as a string',
    run: (h, id) =>
      session201(h, id, {
        start: (f) => {
          const info = p(f).transactionInfo as Params;
          info.remoteStartId = String(info.remoteStartId);
          delete p(f).idToken; // the token then comes only from the remoteStartId
        },
      }),
  },
  {
    name: '2.0.1 sampledValue.value as a string',
    run: (h, id) =>
      session201(h, id, {
        sample: (f) => {
          for (const v of sampled(f)) v.value = String(v.value);
        },
      }).then(() =>
        expect(h.deviations(id)).toContain(
          'TransactionEvent meterValue[].sampledValue[].value string_as_number',
        ),
      ),
  },
  {
    name: '2.0.1 BootNotification with over-long fields and a vendor field',
    run: async (h, id) => {
      const cp = await rawCharger(h.t.gw.ocppUrl, id, CHARGER_PASSWORD, ['ocpp2.0.1']);
      try {
        const boot = (await cp.call('BootNotification', {
          reason: 'PowerUp',
          chargingStation: {
            vendorName: 'Field',
            model: 'X',
            firmwareVersion: 'f'.repeat(60),
            vendorBuild: 'nightly',
          },
        })) as { status: string };
        expect(boot.status).toBe('Accepted');
        expect(h.deviations(id)).toEqual(
          expect.arrayContaining([
            'BootNotification chargingStation.firmwareVersion string_too_long',
            'BootNotification chargingStation.vendorBuild unknown_field',
          ]),
        );
      } finally {
        await cp.close({ force: true });
      }
    },
  },
  {
    name: '2.0.1 TxUpdatedMeasurands refused: register alone, read back with GetVariables',
    run: async (h, id) => {
      const cp = await rawCharger(h.t.gw.ocppUrl, id, CHARGER_PASSWORD, ['ocpp2.0.1']);
      const asked: string[] = [];
      cp.handle('SetVariables', async ({ params }) => {
        const { setVariableData } = params as {
          setVariableData: {
            component: { name: string };
            variable: { name: string };
            attributeValue: string;
          }[];
        };
        return {
          setVariableResult: setVariableData.map((d) => {
            if (d.variable.name === 'TxUpdatedMeasurands') asked.push(d.attributeValue);
            const refused =
              d.variable.name === 'TxUpdatedMeasurands' && d.attributeValue.includes(',');
            return {
              attributeStatus: refused ? 'Rejected' : 'Accepted',
              component: d.component,
              variable: d.variable,
            };
          }),
        };
      });
      cp.handle('GetVariables', async ({ params }) => ({
        getVariableResult: (
          params as { getVariableData: { component: object; variable: object }[] }
        ).getVariableData.map((d) => ({
          attributeStatus: 'Accepted',
          attributeValue: KWH_REGISTER,
          component: d.component,
          variable: d.variable,
        })),
      }));
      try {
        await cp.call('BootNotification', {
          reason: 'PowerUp',
          chargingStation: { vendorName: 'Field', model: 'X' },
        });
        await waitUntil(() => h.metering(id), 5000, 'metering recorded');
        expect(asked).toEqual([`${KWH_REGISTER},Power.Active.Import,SoC`, KWH_REGISTER]);
        expect(h.metering(id)).toEqual({ measurands: KWH_REGISTER, energy: 'register' });
      } finally {
        await cp.close({ force: true });
      }
    },
  },
  {
    name: '2.0.1 Ended TransactionEvent that cannot be understood is still answered and recorded',
    run: async (h, id) => {
      const cp = await rawCharger(h.t.gw.ocppUrl, id, CHARGER_PASSWORD, ['ocpp2.0.1']);
      try {
        await expect(
          cp.call('TransactionEvent', { eventType: 'Ended', seqNo: 'x' }),
        ).resolves.toEqual({});
        expect(h.notes(id).some((n) => n.startsWith('TransactionEvent: not understood'))).toBe(
          true,
        );
      } finally {
        await cp.close({ force: true });
      }
    },
  },
];

/**
 * A token deviation: a card (or vehicle) bound in its canonical form is presented as the charger
 * writes it. The frame is taken at the edge (padding counted), answered schema-valid, and the
 * binding is what the presented form judges to, Accepted at the charger; `another` forms are
 * another key, never guessed (unknown), until that form is bound too.
 */
function tokenRow(
  name: string,
  protocol: RawProtocol,
  bound: { value: string; type: IdTokenType; kind?: 'card' | 'vehicle' },
  sent: string[],
  o: { another?: boolean; deviation?: string } = {},
): Row {
  return {
    name,
    run: async (h, id) => {
      const store = new IdTokenStore(h.t.gw.db);
      const at = new Date().toISOString();
      const input = {
        driverId: DRIVERS.ada.id,
        kind: bound.kind ?? 'card',
        source: 'operator' as const,
      };
      const token = store.bind({ ...input, type: bound.type, value: bound.value }, at);
      const station = await h.station(protocol, id);
      for (const form of sent) {
        const reply = (await station.send(
          protocol === raw16
            ? { action: 'Authorize', params: { idTag: form } }
            : { action: 'Authorize', params: { idToken: { idToken: form, type: bound.type } } },
        )) as { idTagInfo?: { status: string }; idTokenInfo?: { status: string } };
        const status = (reply.idTagInfo ?? reply.idTokenInfo)?.status;
        // The bound card's form pays (its wallet holds the tap minimum); another key is unknown.
        if (o.another) expect(status).toBe(protocol === raw16 ? 'Invalid' : 'Unknown');
        else expect(status).toBe('Accepted');
        const judged = store.judge(form, Date.now());
        if (!o.another) {
          expect(judged).toMatchObject({ status: 'accepted', token: { id: token.id } });
          continue;
        }
        expect(judged).toEqual({ status: 'unknown' });
        store.bind({ ...input, type: bound.type, value: form }, at);
        expect(store.judge(form, Date.now())).toMatchObject({ status: 'accepted' });
      }
      if (o.deviation) expect(h.deviations(id)).toContain(o.deviation);
      else expect(h.deviations(id).filter((k) => k.startsWith('Authorize'))).toEqual([]);
    },
  };
}

ROWS.push(
  tokenRow('1.6 card UID in lower-case hex', raw16, { value: '0584350940C1D2', type: 'ISO14443' }, [
    '0584350940c1d2',
  ]),
  tokenRow(
    '2.0.1 card UID with separators (:, -, space)',
    raw201,
    { value: '04A23B1C', type: 'ISO14443' },
    ['04:a2:3b:1c', '04-A2-3B-1C', '04 A2 3B 1C'],
  ),
  tokenRow('1.6 card UID zero-padded on the left', raw16, { value: '04B7C61A', type: 'ISO14443' }, [
    '0000000004B7C61A',
    '4B7C61A',
  ]),
  tokenRow(
    '1.6 idTag padded with NULs to its 21-byte buffer',
    raw16,
    { value: 'E2806894', type: 'ISO14443' },
    [`E2806894${'\0'.repeat(13)}`],
    { deviation: 'Authorize idTag identifier_padded' },
  ),
  tokenRow(
    '1.6 AutoCharge VID: idTag, the same MAC as a 2.0.1 MacAddress token',
    raw16,
    { value: '00:23:a7:f1:c2:d4', type: 'MacAddress', kind: 'vehicle' },
    ['VID:0023A7F1C2D4', 'vid:0023a7f1c2d4'],
  ),
  tokenRow(
    '1.6 card UID cut short by the reader (6 of 7 bytes): another key',
    raw16,
    { value: '04656B82EB2CDD', type: 'ISO14443' },
    ['04656B82EB2C'],
    { another: true },
  ),
  tokenRow(
    '2.0.1 card UID in decimal: another key',
    raw201,
    { value: '04A23B1D', type: 'ISO14443' },
    [String(0x04a23b1d)],
    { another: true },
  ),
  {
    name: '1.6 idTag longer than its 20 characters (a 10-byte UID with separators): refused, never cut',
    run: async (h, id) => {
      const long = '04:A2:3B:1C:5D:6E:7F:80:91:A2';
      // Cut to 20 characters it would be this 7-byte card, bound to a driver: never guessed.
      new IdTokenStore(h.t.gw.db).bind(
        {
          driverId: DRIVERS.ada.id,
          kind: 'card',
          type: 'ISO14443',
          value: long.slice(0, 20),
          source: 'operator',
        },
        new Date().toISOString(),
      );
      const station = await h.station(raw16, id);
      await expect(
        station.send({ action: 'Authorize', params: { idTag: long } }),
      ).rejects.toMatchObject({ rpcErrorCode: expect.stringMatching(/Violation/) });
    },
  },
);

const CHARGER_IDS = ROWS.map((_, i) => `FC-${String(i + 1).padStart(2, '0')}`);

describe('field compatibility (docs/field-compatibility.md)', () => {
  let t: TestGateway;
  const open: { close(): Promise<void> }[] = [];
  beforeAll(async () => {
    const base = testConfig('/unused');
    const passwordHash = (base.chargers as { passwordHash: string }[])[0]!.passwordHash;
    t = await startTestGateway({
      chargers: [
        ...(base.chargers as object[]),
        ...CHARGER_IDS.map((id) => ({
          id,
          passwordHash,
          // Raw frames move a register by kWh within milliseconds: the plausibility bound (a
          // connector's maximum power over the elapsed time) is not what these rows test.
          connectors: [
            { id: '1', tariff: 'dc', maxPowerKw: UNPHYSICAL_KW },
            { id: '2', tariff: 'dc', maxPowerKw: UNPHYSICAL_KW },
          ],
        })),
      ] as never,
    });
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });
  afterAll(async () => {
    expect(verifyLedger(t.gw.db).checks.filter((c) => c.violations.length > 0)).toEqual([]);
    await t.close();
  });

  const h: Harness = {
    get t() {
      return t;
    },
    async station(protocol, id) {
      const station = await protocol.connect(t.gw.ocppUrl, id);
      open.push(station);
      await station.boot();
      return station;
    },
    async paid(station, id) {
      const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
      const before = station.remoteStarts.length;
      const res = await startSession(
        t.gw.url,
        token,
        { chargerId: id, connectorId: '1', driverEmail: DRIVERS.ada.email },
        AMOUNT,
      );
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      await waitUntil(() => station.remoteStarts.length > before, 5000, 'remote start');
      return (res.body as { sessionId: string }).sessionId;
    },
    session: (id) => t.gw.db.prepare('SELECT * FROM sessions WHERE id = ?').get(id) as SessionRow,
    async settled(id, deliveredWh) {
      await waitUntil(() => h.session(id).state === 'settled', 5000, 'settlement');
      expect(h.session(id)).toMatchObject({ delivered_wh: deliveredWh, cost: cost(deliveredWh) });
    },
    async meterReached(id, wh) {
      await waitUntil(() => h.session(id).last_meter_wh === wh, 5000, `register at ${wh} Wh`);
    },
    deviations: (chargerId) =>
      (
        t.gw.db
          .prepare('SELECT kind FROM charger_deviations WHERE charger_id = ?')
          .all(chargerId) as { kind: string }[]
      ).map((r) => r.kind),
    notes: (chargerId) =>
      (
        t.gw.db
          .prepare('SELECT action, note FROM ocpp_events WHERE charger_id = ?')
          .all(chargerId) as { action: string; note: string }[]
      ).map((r) => `${r.action}: ${r.note}`),
    metering: (chargerId) =>
      t.gw.db
        .prepare('SELECT measurands, energy FROM charger_metering WHERE charger_id = ?')
        .get(chargerId) as { measurands: string; energy: string } | undefined,
  };

  ROWS.forEach((row, i) => {
    it(row.name, () => row.run(h, CHARGER_IDS[i] as string));
  });
});
