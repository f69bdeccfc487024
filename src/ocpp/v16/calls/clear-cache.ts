import { callForReply, type CallTarget } from '../../calls/operator-call.js';
import type { ChargerReply } from '../../port.js';

/** ClearCache (Core): the charger answers Accepted or Rejected. */
export function clearCache(target: CallTarget): Promise<ChargerReply> {
  return callForReply(target, 'ClearCache', {});
}
