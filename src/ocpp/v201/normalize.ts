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
  DataTransfer: DataTransferReq;
  FirmwareStatusNotification: unknown;
  Heartbeat: unknown;
  LogStatusNotification: unknown;
  MeterValues: MeterValuesReq;
  NotifyChargingLimit: unknown;
  NotifyEVChargingNeeds: NotifyEVChargingNeedsReq;
  NotifyEvent: unknown;
  NotifyReport: unknown;
  ReservationStatusUpdate: unknown;
  SecurityEventNotification: unknown;
  StatusNotification: StatusNotificationReq;
  TransactionEvent: TransactionEventReq;
}

/**
 * The one place where a 2.0.1 station's frame becomes the request a handler reads. ocpp-rpc's
 * strict mode has already checked the frame against the official schema.
 */
export function normalize201<A extends keyof Requests201>(
  _action: A,
  params: unknown,
): Requests201[A] {
  return params as Requests201[A];
}
