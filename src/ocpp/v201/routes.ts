import { authorize } from './handlers/authorize.js';
import { bootNotification } from './handlers/boot-notification.js';
import { clearedChargingLimit } from './handlers/cleared-charging-limit.js';
import { dataTransfer } from './handlers/data-transfer.js';
import { firmwareStatusNotification } from './handlers/firmware-status-notification.js';
import { get15118EVCertificate } from './handlers/get-15118-ev-certificate.js';
import { getCertificateStatus } from './handlers/get-certificate-status.js';
import { heartbeat } from './handlers/heartbeat.js';
import { logStatusNotification } from './handlers/log-status-notification.js';
import { meterValues } from './handlers/meter-values.js';
import { notifyChargingLimit } from './handlers/notify-charging-limit.js';
import { notifyCustomerInformation } from './handlers/notify-customer-information.js';
import { notifyDisplayMessages } from './handlers/notify-display-messages.js';
import { notifyEVChargingNeeds } from './handlers/notify-ev-charging-needs.js';
import { notifyEVChargingSchedule } from './handlers/notify-ev-charging-schedule.js';
import { notifyEvent } from './handlers/notify-event.js';
import { notifyMonitoringReport } from './handlers/notify-monitoring-report.js';
import { notifyReport } from './handlers/notify-report.js';
import { publishFirmwareStatusNotification } from './handlers/publish-firmware-status-notification.js';
import { reportChargingProfiles } from './handlers/report-charging-profiles.js';
import { reservationStatusUpdate } from './handlers/reservation-status-update.js';
import { securityEventNotification } from './handlers/security-event-notification.js';
import { signCertificate } from './handlers/sign-certificate.js';
import { statusNotification } from './handlers/status-notification.js';
import { transactionEvent } from './handlers/transaction-event.js';
import type { Requests201 } from './normalize.js';
import type { Handler201 } from './connection-context.js';

/** Every call a 2.0.1 charging station may send that the gateway answers, with its handler. */
export const ROUTES201: { [A in keyof Requests201]: Handler201<Requests201[A]> } = {
  Authorize: authorize,
  BootNotification: bootNotification,
  ClearedChargingLimit: clearedChargingLimit,
  DataTransfer: dataTransfer,
  FirmwareStatusNotification: firmwareStatusNotification,
  Get15118EVCertificate: get15118EVCertificate,
  GetCertificateStatus: getCertificateStatus,
  Heartbeat: heartbeat,
  LogStatusNotification: logStatusNotification,
  MeterValues: meterValues,
  NotifyChargingLimit: notifyChargingLimit,
  NotifyCustomerInformation: notifyCustomerInformation,
  NotifyDisplayMessages: notifyDisplayMessages,
  NotifyEVChargingNeeds: notifyEVChargingNeeds,
  NotifyEVChargingSchedule: notifyEVChargingSchedule,
  NotifyEvent: notifyEvent,
  NotifyMonitoringReport: notifyMonitoringReport,
  NotifyReport: notifyReport,
  PublishFirmwareStatusNotification: publishFirmwareStatusNotification,
  ReportChargingProfiles: reportChargingProfiles,
  ReservationStatusUpdate: reservationStatusUpdate,
  SecurityEventNotification: securityEventNotification,
  SignCertificate: signCertificate,
  StatusNotification: statusNotification,
  TransactionEvent: transactionEvent,
};
