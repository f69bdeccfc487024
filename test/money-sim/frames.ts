/**
 * The charger messages the simulation sends, and how each protocol spells them. Meter values come
 * in the encodings real chargers use (strings, kWh, no unit, a multiplier), so the simulation also
 * drives the adapters' unit handling.
 */

export type StatusName = 'Available' | 'Occupied' | 'Faulted';

/** One transaction as the charger knows it: its true register and energy, whatever it reports. */
export interface ChargerTx {
  connectorId: string;
  idToken: string;
  /** 1.6: the id the gateway handed out (null until the start is answered); 2.0.1: our own. */
  ref: string | null;
  remoteStartId: number | null;
  /** Energy really delivered in this transaction, in Wh. */
  trueWh: number;
  seqNo: number;
  stopRequested: boolean;
  /** The highest register the gateway has received for this transaction (null: none yet). */
  deliveredMax: number | null;
}

interface Timed {
  timestamp: string;
  /** 2.0.1 only: the event's seqNo within its transaction. */
  seqNo: number;
  /** Set when the message waited in the charger's offline queue. */
  offline: boolean;
}

export type ChargerMsg =
  | { kind: 'boot' }
  | { kind: 'status'; connectorId: string; status: StatusName }
  | (Timed & { kind: 'start'; tx: ChargerTx; meterStart: number | null })
  | (Timed & { kind: 'meter'; tx: ChargerTx; wh: number; encoding: number })
  | (Timed & { kind: 'stop'; tx: ChargerTx; wh: number | null; reason: string });

export interface Frame {
  method: string;
  params: Record<string, unknown>;
}

const REGISTER = 'Energy.Active.Import.Register';
export const ENCODINGS = 4;

function kwh(wh: number): number {
  return wh / 1000;
}

function sampled16(wh: number, encoding: number): Record<string, unknown> {
  switch (encoding % ENCODINGS) {
    case 0:
      return { value: String(wh) }; // no measurand, no unit: the register in Wh
    case 1:
      return { value: String(wh), measurand: REGISTER, unit: 'Wh', context: 'Sample.Periodic' };
    case 2:
      return { value: kwh(wh).toFixed(3), measurand: REGISTER, unit: 'kWh' };
    default:
      return { value: ` ${wh} `, measurand: REGISTER };
  }
}

function sampled201(wh: number, encoding: number, context: string): Record<string, unknown> {
  switch (encoding % ENCODINGS) {
    case 0:
      return { value: wh, context };
    case 1:
      return { value: wh, context, measurand: REGISTER, unitOfMeasure: { unit: 'Wh' } };
    case 2:
      return { value: kwh(wh), context, measurand: REGISTER, unitOfMeasure: { unit: 'kWh' } };
    default:
      return { value: kwh(wh), context, unitOfMeasure: { unit: 'Wh', multiplier: 3 } };
  }
}

function ref16(tx: ChargerTx): number {
  if (tx.ref === null) throw new Error('1.6 transaction used before its start was answered');
  return Number(tx.ref);
}

export function frame16(msg: ChargerMsg, now: string): Frame {
  switch (msg.kind) {
    case 'boot':
      return {
        method: 'BootNotification',
        params: { chargePointVendor: 'MoneySim', chargePointModel: 'Sim16' },
      };
    case 'status':
      return {
        method: 'StatusNotification',
        params: {
          connectorId: Number(msg.connectorId),
          errorCode: msg.status === 'Faulted' ? 'GroundFailure' : 'NoError',
          status: msg.status === 'Occupied' ? 'Preparing' : msg.status,
          timestamp: now,
        },
      };
    case 'start':
      return {
        method: 'StartTransaction',
        params: {
          connectorId: Number(msg.tx.connectorId),
          idTag: msg.tx.idToken,
          meterStart: msg.meterStart ?? 0,
          timestamp: msg.timestamp,
        },
      };
    case 'meter':
      return {
        method: 'MeterValues',
        params: {
          connectorId: Number(msg.tx.connectorId),
          transactionId: ref16(msg.tx),
          meterValue: [
            { timestamp: msg.timestamp, sampledValue: [sampled16(msg.wh, msg.encoding)] },
          ],
        },
      };
    case 'stop':
      return {
        method: 'StopTransaction',
        params: {
          transactionId: ref16(msg.tx),
          meterStop: msg.wh ?? 0,
          timestamp: msg.timestamp,
          reason: msg.reason,
        },
      };
  }
}

export function frame201(msg: ChargerMsg, now: string): Frame {
  switch (msg.kind) {
    case 'boot':
      return {
        method: 'BootNotification',
        params: { reason: 'PowerUp', chargingStation: { model: 'Sim201', vendorName: 'MoneySim' } },
      };
    case 'status':
      return {
        method: 'StatusNotification',
        params: {
          timestamp: now,
          connectorStatus: msg.status,
          evseId: Number(msg.connectorId),
          connectorId: 1,
        },
      };
    case 'start':
    case 'meter':
    case 'stop': {
      const { tx } = msg;
      const eventType =
        msg.kind === 'start' ? 'Started' : msg.kind === 'meter' ? 'Updated' : 'Ended';
      const register =
        msg.kind === 'start'
          ? msg.meterStart === null
            ? null
            : sampled201(msg.meterStart, 1, 'Transaction.Begin')
          : msg.kind === 'meter'
            ? sampled201(msg.wh, msg.encoding, 'Sample.Periodic')
            : msg.wh === null
              ? null
              : sampled201(msg.wh, 1, 'Transaction.End');
      return {
        method: 'TransactionEvent',
        params: {
          eventType,
          timestamp: msg.timestamp,
          triggerReason:
            msg.kind === 'start'
              ? 'RemoteStart'
              : msg.kind === 'meter'
                ? 'MeterValuePeriodic'
                : 'StopAuthorized',
          seqNo: msg.seqNo,
          ...(msg.offline && { offline: true }),
          transactionInfo: {
            transactionId: tx.ref,
            ...(msg.kind === 'stop' && { stoppedReason: msg.reason }),
            ...(msg.kind === 'start' &&
              tx.remoteStartId !== null && { remoteStartId: tx.remoteStartId }),
          },
          ...(msg.kind === 'start' && {
            idToken: { idToken: tx.idToken, type: 'Central' },
            evse: { id: Number(tx.connectorId), connectorId: 1 },
          }),
          ...(register && { meterValue: [{ timestamp: msg.timestamp, sampledValue: [register] }] }),
        },
      };
    }
  }
}
