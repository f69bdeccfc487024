import { callForReply, type CallTarget } from '../../calls/operator-call.js';
import type { ChargerReply, ResetKind } from '../../port.js';

/**
 * Reset: Soft stops running transactions gracefully before rebooting, Hard reboots at once (the
 * charger still tries to end transactions). 1.6 answers only Accepted or Rejected.
 */
export function reset(target: CallTarget, kind: ResetKind): Promise<ChargerReply> {
  return callForReply(target, 'Reset', { type: kind === 'soft' ? 'Soft' : 'Hard' });
}
