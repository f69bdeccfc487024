import { conformMessage, type FrameNormalizer } from '../connection/edge.js';
import { holdsPaddedIdentifier } from '../connection/identifiers.js';
import type { SecurityEventReq } from '../charger-state/station-notifications.js';
import type {
  AuthorizeReq,
  BootNotificationReq,
  DataTransferReq,
  MeterValuesReq,
  StartTransactionReq,
  StatusNotificationReq,
  StopTransactionReq,
} from './messages.js';

/**
 * A StartTransaction's meterStart as the charger wrote it, when it had a decimal fraction: the
 * repair rounds it to the integer the schema wants, but a decimal meterStart is a register in kWh
 * as often as in Wh (EVerest libocpp), which only the transaction's first register tells; rounded,
 * the energy before that register could not be billed. Keyed by the normalized request the
 * handler receives.
 */
const unroundedStarts = new WeakMap<object, number>();

function keepUnroundedStart(raw: unknown, conformed: unknown): void {
  const sent = (raw as { meterStart?: unknown } | null)?.meterStart;
  const n = typeof sent === 'string' ? Number(sent.trim()) : sent;
  if (typeof n !== 'number' || !Number.isFinite(n) || Number.isInteger(n)) return;
  if (typeof conformed === 'object' && conformed !== null) unroundedStarts.set(conformed, n);
}

/** The meterStart as written, when the edge rounded a decimal one (see keepUnroundedStart). */
export function unroundedMeterStart(req: StartTransactionReq): number | undefined {
  return unroundedStarts.get(req);
}

/** The request each routed 1.6 action carries once normalized. */
export interface Requests16 {
  Authorize: AuthorizeReq;
  BootNotification: BootNotificationReq;
  DataTransfer: DataTransferReq;
  DiagnosticsStatusNotification: { status: string };
  FirmwareStatusNotification: { status: string };
  Heartbeat: unknown;
  LogStatusNotification: unknown;
  MeterValues: MeterValuesReq;
  SecurityEventNotification: SecurityEventReq;
  SignCertificate: unknown;
  SignedFirmwareStatusNotification: { status: string; requestId?: number };
  StartTransaction: StartTransactionReq;
  StatusNotification: StatusNotificationReq;
  StopTransaction: StopTransactionReq;
}

/**
 * 1.6's transaction-related messages a charger retries while it gets CALLERRORs, and that must
 * never block its queue: one that cannot be understood is answered (and kept in ocpp_events).
 */
const ANSWERED_ANYWAY = new Set(['StopTransaction', 'MeterValues']);

/**
 * The one place where a 1.6 charger's frame becomes the request a handler reads (and its reply to
 * our call the result we read): the schema-guided repairs of tolerant.ts, which cover what 1.6
 * chargers get wrong in the field (numbers as JSON numbers, units and enumerations in any case,
 * decimal registers, vendor fields, vendor stop reasons, padded idTags), before strict validation.
 */
export const normalize16: FrameNormalizer = {
  request: (method, params, note) => {
    const conformed = conformMessage('ocpp1.6', `urn:${method}.req`, params, method, note);
    if (method === 'StartTransaction') keepUnroundedStart(params, conformed);
    return conformed;
  },
  result: (method, result, note) =>
    conformMessage('ocpp1.6', `urn:${method}.conf`, result, `${method}.conf`, note),
  repairsValid: (_method, params) => holdsPaddedIdentifier(params),
  answerAnyway: (method) => (ANSWERED_ANYWAY.has(method) ? {} : undefined),
};
