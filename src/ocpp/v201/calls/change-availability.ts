import { callForReply, type CallTarget } from '../../calls/operator-call.js';
import type { ChargerReply } from '../../port.js';

/** ChangeAvailability of one EVSE, or (evseId null) of the whole station. */
export function changeAvailability(
  target: CallTarget,
  evseId: number | null,
  operative: boolean,
): Promise<ChargerReply> {
  return callForReply(target, 'ChangeAvailability', {
    operationalStatus: operative ? 'Operative' : 'Inoperative',
    ...(evseId === null ? {} : { evse: { id: evseId } }),
  });
}
