import { authorize } from './handlers/authorize.js';
import { bootNotification } from './handlers/boot-notification.js';
import { dataTransfer } from './handlers/data-transfer.js';
import { firmwareStatusNotification } from './handlers/firmware-status-notification.js';
import { heartbeat } from './handlers/heartbeat.js';
import { logStatusNotification } from './handlers/log-status-notification.js';
import { meterValues } from './handlers/meter-values.js';
import { notifyChargingLimit } from './handlers/notify-charging-limit.js';
import { notifyEVChargingNeeds } from './handlers/notify-ev-charging-needs.js';
import { notifyEvent } from './handlers/notify-event.js';
import { notifyReport } from './handlers/notify-report.js';
import { reservationStatusUpdate } from './handlers/reservation-status-update.js';
import { securityEventNotification } from './handlers/security-event-notification.js';
import { statusNotification } from './handlers/status-notification.js';
import { transactionEvent } from './handlers/transaction-event.js';
import type { Requests201 } from './normalize.js';
import type { Handler201 } from './connection-context.js';

/** Every call a 2.0.1 charging station may send that the gateway answers, with its handler. */
export const ROUTES201: { [A in keyof Requests201]: Handler201<Requests201[A]> } = {
  Authorize: authorize,
  BootNotification: bootNotification,
  DataTransfer: dataTransfer,
  FirmwareStatusNotification: firmwareStatusNotification,
  Heartbeat: heartbeat,
  LogStatusNotification: logStatusNotification,
  MeterValues: meterValues,
  NotifyChargingLimit: notifyChargingLimit,
  NotifyEVChargingNeeds: notifyEVChargingNeeds,
  NotifyEvent: notifyEvent,
  NotifyReport: notifyReport,
  ReservationStatusUpdate: reservationStatusUpdate,
  SecurityEventNotification: securityEventNotification,
  StatusNotification: statusNotification,
  TransactionEvent: transactionEvent,
};
