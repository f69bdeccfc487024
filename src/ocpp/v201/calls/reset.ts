import { callForReply, type CallTarget } from '../../calls/operator-call.js';
import type { ChargerReply, ResetKind } from '../../port.js';

/**
 * Reset of the whole station: soft is OnIdle (Scheduled while a transaction runs, so a paying
 * driver's session is not cut), hard is Immediate (transactions end with ImmediateReset).
 */
export function reset(target: CallTarget, kind: ResetKind): Promise<ChargerReply> {
  return callForReply(target, 'Reset', { type: kind === 'soft' ? 'OnIdle' : 'Immediate' });
}
