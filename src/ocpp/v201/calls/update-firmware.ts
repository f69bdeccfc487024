import { callForReply, type CallTarget } from '../../calls/operator-call.js';
import type { ChargerReply, FirmwareRequest } from '../../port.js';

/**
 * UpdateFirmware: Accepted, Rejected, AcceptedCanceled, InvalidCertificate or RevokedCertificate.
 * Signed firmware carries its signing certificate and signature (L01.FR.11).
 */
export function updateFirmware(
  target: CallTarget,
  request: FirmwareRequest,
): Promise<ChargerReply> {
  return callForReply(target, 'UpdateFirmware', {
    requestId: request.requestId,
    retries: request.retries,
    retryInterval: request.retryIntervalSeconds,
    firmware: {
      location: request.location,
      retrieveDateTime: request.retrieveAt,
      ...(request.signing ?? {}),
    },
  });
}
