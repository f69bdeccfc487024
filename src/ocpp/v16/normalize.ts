import { conformMessage, type FrameNormalizer } from '../connection/edge.js';
import type {
  AuthorizeReq,
  BootNotificationReq,
  DataTransferReq,
  MeterValuesReq,
  StartTransactionReq,
  StatusNotificationReq,
  StopTransactionReq,
} from './messages.js';

/** The request each routed 1.6 action carries once normalized. */
export interface Requests16 {
  Authorize: AuthorizeReq;
  BootNotification: BootNotificationReq;
  DataTransfer: DataTransferReq;
  DiagnosticsStatusNotification: { status: string };
  FirmwareStatusNotification: { status: string };
  Heartbeat: unknown;
  MeterValues: MeterValuesReq;
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
 * decimal registers, vendor fields, vendor stop reasons), before strict validation.
 */
export const normalize16: FrameNormalizer = {
  request: (method, params, note) =>
    conformMessage('ocpp1.6', `urn:${method}.req`, params, method, note),
  result: (method, result, note) =>
    conformMessage('ocpp1.6', `urn:${method}.conf`, result, `${method}.conf`, note),
  answerAnyway: (method) => (ANSWERED_ANYWAY.has(method) ? {} : undefined),
};
