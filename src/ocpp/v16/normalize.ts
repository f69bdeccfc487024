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
  DiagnosticsStatusNotification: unknown;
  FirmwareStatusNotification: unknown;
  Heartbeat: unknown;
  MeterValues: MeterValuesReq;
  StartTransaction: StartTransactionReq;
  StatusNotification: StatusNotificationReq;
  StopTransaction: StopTransactionReq;
}

/**
 * The one place where a 1.6 charger's frame becomes the request a handler reads. ocpp-rpc's
 * strict mode has already checked the frame against the official schema.
 */
export function normalize16<A extends keyof Requests16>(
  _action: A,
  params: unknown,
): Requests16[A] {
  return params as Requests16[A];
}
