import { authorize } from './handlers/authorize.js';
import { bootNotification } from './handlers/boot-notification.js';
import { dataTransfer } from './handlers/data-transfer.js';
import { diagnosticsStatusNotification } from './handlers/diagnostics-status-notification.js';
import { firmwareStatusNotification } from './handlers/firmware-status-notification.js';
import { signedFirmwareStatusNotification } from './handlers/signed-firmware-status-notification.js';
import { heartbeat } from './handlers/heartbeat.js';
import { meterValues } from './handlers/meter-values.js';
import { startTransaction } from './handlers/start-transaction.js';
import { statusNotification } from './handlers/status-notification.js';
import { stopTransaction } from './handlers/stop-transaction.js';
import type { Requests16 } from './normalize.js';
import type { Handler16 } from './connection-context.js';

/** Every call a 1.6 charge point may send that the gateway answers, with its handler. */
export const ROUTES16: { [A in keyof Requests16]: Handler16<Requests16[A]> } = {
  Authorize: authorize,
  BootNotification: bootNotification,
  DataTransfer: dataTransfer,
  DiagnosticsStatusNotification: diagnosticsStatusNotification,
  FirmwareStatusNotification: firmwareStatusNotification,
  Heartbeat: heartbeat,
  MeterValues: meterValues,
  SignedFirmwareStatusNotification: signedFirmwareStatusNotification,
  StartTransaction: startTransaction,
  StatusNotification: statusNotification,
  StopTransaction: stopTransaction,
};
