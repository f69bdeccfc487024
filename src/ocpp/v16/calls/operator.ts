import type { OperatorCalls } from '../../protocol-adapter.js';
import type { CallTarget } from '../../calls/operator-call.js';
import { changeAvailability } from './change-availability.js';
import { getDiagnostics } from './get-diagnostics.js';
import { sendAuthorizationKey, sendChangeConfiguration } from './change-configuration.js';
import { readConfiguration } from './get-configuration.js';
import { remoteStopTransaction } from './remote-stop-transaction.js';
import { reset } from './reset.js';
import { triggerMessage } from './trigger-message.js';
import { updateFirmware } from './update-firmware.js';
import { unlockConnector } from './unlock-connector.js';

/** The operator's commands in OCPP 1.6J. */
export function operatorCalls16(target: CallTarget): OperatorCalls {
  return {
    requestStop: (ref) => remoteStopTransaction(target, ref),
    unlockConnector: (connectorId) => unlockConnector(target, connectorId),
    reset: (kind) => reset(target, kind),
    setAvailability: (connectorId, operative) => changeAvailability(target, connectorId, operative),
    trigger: (connectorId, kind) => triggerMessage(target, connectorId, kind),
    readConfiguration: (keys) => readConfiguration(target, keys),
    changeConfiguration: (key, value) => sendChangeConfiguration(target, key, value),
    setBasicAuthPassword: (password) => sendAuthorizationKey(target, password),
    updateFirmware: (request) => updateFirmware(target, request),
    requestLog: (request) => getDiagnostics(target, request),
  };
}
