import { conformMessage, type FrameNormalizer } from '../connection/edge.js';
import type { SecurityEventReq } from '../charger-state/station-notifications.js';
import { holdsPaddedIdentifier } from '../connection/identifiers.js';
import type { NoteDeviation } from '../connection/tolerant.js';
import type {
  AuthorizeReq,
  BootNotificationReq,
  DataTransferReq,
  MeterValuesReq,
  NotifyEVChargingNeedsReq,
  StatusNotificationReq,
  TransactionEventReq,
} from './messages.js';

/** The request each routed 2.0.1 action carries once normalized. */
export interface Requests201 {
  Authorize: AuthorizeReq;
  BootNotification: BootNotificationReq;
  ClearedChargingLimit: unknown;
  DataTransfer: DataTransferReq;
  FirmwareStatusNotification: { status: string; requestId?: number };
  Get15118EVCertificate: unknown;
  GetCertificateStatus: unknown;
  Heartbeat: unknown;
  LogStatusNotification: { status: string; requestId?: number };
  MeterValues: MeterValuesReq;
  NotifyChargingLimit: unknown;
  NotifyCustomerInformation: unknown;
  NotifyDisplayMessages: unknown;
  NotifyEVChargingNeeds: NotifyEVChargingNeedsReq;
  NotifyEVChargingSchedule: unknown;
  NotifyEvent: unknown;
  NotifyMonitoringReport: unknown;
  NotifyReport: unknown;
  PublishFirmwareStatusNotification: unknown;
  ReportChargingProfiles: unknown;
  ReservationStatusUpdate: unknown;
  SecurityEventNotification: SecurityEventReq;
  SignCertificate: unknown;
  StatusNotification: StatusNotificationReq;
  TransactionEvent: TransactionEventReq;
}

/**
 * 2.0.1's unitOfMeasure.unit is free text (the spec lists the values, the schema does not), so
 * the schema-guided repair cannot fix its case: this list does.
 */
const UNITS = ['Wh', 'kWh', 'MWh', 'varh', 'kvarh', 'W', 'kW', 'MW', 'VA', 'kVA', 'var', 'kvar'];
const UNIT_BY_FOLDED = new Map(UNITS.map((u) => [u.toLowerCase(), u]));

function canonicalUnits(method: string, meterValues: unknown, note: NoteDeviation | null): boolean {
  let repaired = false;
  if (!Array.isArray(meterValues)) return repaired;
  for (const mv of meterValues as { sampledValue?: unknown }[]) {
    if (!Array.isArray(mv?.sampledValue)) continue;
    for (const sv of mv.sampledValue as { unitOfMeasure?: { unit?: unknown } }[]) {
      const unit = sv?.unitOfMeasure?.unit;
      if (typeof unit !== 'string') continue;
      const canonical = UNIT_BY_FOLDED.get(unit.trim().toLowerCase());
      if (canonical === undefined || canonical === unit) continue;
      repaired = true;
      // Null: only asked whether there is a repair to make, the message is left as it is.
      if (!note) return repaired;
      note(`${method} meterValue[].sampledValue[].unitOfMeasure.unit unit_case`, unit);
      (sv.unitOfMeasure as { unit: string }).unit = canonical;
    }
  }
  return repaired;
}

function withMeterValues(method: string): boolean {
  return method === 'TransactionEvent' || method === 'MeterValues';
}

/**
 * A TransactionEvent that ends a transaction is never refused, however broken: the charger would
 * retry it, and a refused end is a lost stop. Other events that cannot be understood are refused.
 */
function endsTransaction(params: unknown): boolean {
  return (params as { eventType?: unknown } | null)?.eventType === 'Ended';
}

/**
 * The one place where a 2.0.1 station's frame becomes the request a handler reads (and its reply
 * to our call the result we read): the schema-guided repairs of tolerant.ts against the
 * subprotocol's own schemas (2.0.1's, or 2.1's for its successor), then unit case.
 */
export function normalizerOf201Family(subprotocol: 'ocpp2.0.1' | 'ocpp2.1'): FrameNormalizer {
  return {
    request: (method, params, note) => {
      const req = conformMessage(subprotocol, `urn:${method}.req`, params, method, note);
      if (withMeterValues(method)) {
        canonicalUnits(method, (req as { meterValue?: unknown } | null)?.meterValue, note);
      }
      return req;
    },
    result: (method, result, note) =>
      conformMessage(subprotocol, `urn:${method}.conf`, result, `${method}.conf`, note),
    repairsValid: (method, params) =>
      holdsPaddedIdentifier(params) ||
      (withMeterValues(method) &&
        canonicalUnits(method, (params as { meterValue?: unknown } | null)?.meterValue, null)),
    answerAnyway: (method, params) =>
      method === 'MeterValues' || (method === 'TransactionEvent' && endsTransaction(params))
        ? {}
        : undefined,
  };
}

export const normalize201: FrameNormalizer = normalizerOf201Family('ocpp2.0.1');
