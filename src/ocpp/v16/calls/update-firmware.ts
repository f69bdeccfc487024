import { callForReply, type CallTarget } from '../../calls/operator-call.js';
import type { ChargerReply, FirmwareRequest } from '../../port.js';

/**
 * UpdateFirmware: its reply is empty; progress comes as FirmwareStatusNotifications. Signed
 * firmware goes as the security whitepaper's SignedUpdateFirmware (in ocpp-rpc's 1.6 schemas): a
 * charger without it answers with a CALLERROR, and the operator sends an unsigned file instead.
 */
export function updateFirmware(
  target: CallTarget,
  request: FirmwareRequest,
): Promise<ChargerReply> {
  if (request.signing !== null) {
    return callForReply(target, 'SignedUpdateFirmware', {
      requestId: request.requestId,
      retries: request.retries,
      retryInterval: request.retryIntervalSeconds,
      firmware: {
        location: request.location,
        retrieveDateTime: request.retrieveAt,
        signingCertificate: request.signing.signingCertificate,
        signature: request.signing.signature,
      },
    });
  }
  return callForReply(target, 'UpdateFirmware', {
    location: request.location,
    retrieveDate: request.retrieveAt,
    retries: request.retries,
    retryInterval: request.retryIntervalSeconds,
  });
}
