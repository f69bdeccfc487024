import { callForReply, type CallTarget } from '../../calls/operator-call.js';
import type { ChargerReply, FirmwareRequest } from '../../port.js';

/** UpdateFirmware: its reply is empty; progress comes as FirmwareStatusNotifications. */
export function updateFirmware(
  target: CallTarget,
  request: FirmwareRequest,
): Promise<ChargerReply> {
  return callForReply(target, 'UpdateFirmware', {
    location: request.location,
    retrieveDate: request.retrieveAt,
    retries: request.retries,
    retryInterval: request.retryIntervalSeconds,
  });
}
