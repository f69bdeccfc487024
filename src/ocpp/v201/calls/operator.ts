import type { OperatorCalls } from '../../protocol-adapter.js';
import type { CallTarget } from '../../calls/operator-call.js';
import { changeAvailability } from './change-availability.js';
import { getLog } from './get-log.js';
import { readVariables } from './get-variables.js';
import { requestStopTransaction } from './request-stop-transaction.js';
import { reset } from './reset.js';
import { setBasicAuthPassword, setVariable } from './set-variables.js';
import { triggerMessage } from './trigger-message.js';
import { updateFirmware } from './update-firmware.js';
import { unlockConnector } from './unlock-connector.js';

/** The operator's commands in OCPP 2.0.1. */
export function operatorCalls201(target: CallTarget): OperatorCalls {
  return {
    requestStop: (ref) => requestStopTransaction(target, ref),
    unlockConnector: (evseId) => unlockConnector(target, evseId),
    reset: (kind) => reset(target, kind),
    setAvailability: (evseId, operative) => changeAvailability(target, evseId, operative),
    trigger: (evseId, kind) => triggerMessage(target, evseId, kind),
    readConfiguration: (keys) => readVariables(target, keys),
    changeConfiguration: (key, value) => setVariable(target, key, value),
    setBasicAuthPassword: (password) => setBasicAuthPassword(target, password),
    updateFirmware: (request) => updateFirmware(target, request),
    requestLog: (request) => getLog(target, request),
  };
}
