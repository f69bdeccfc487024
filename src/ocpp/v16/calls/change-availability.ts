import { callForReply, type CallTarget } from '../../calls/operator-call.js';
import type { ChargerReply } from '../../port.js';

/** ChangeAvailability; connectorId 0 is the whole charger. Scheduled: after the running transaction. */
export function changeAvailability(
  target: CallTarget,
  connectorId: number | null,
  operative: boolean,
): Promise<ChargerReply> {
  return callForReply(target, 'ChangeAvailability', {
    connectorId: connectorId ?? 0,
    type: operative ? 'Operative' : 'Inoperative',
  });
}
