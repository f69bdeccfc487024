import { callForReply, type CallTarget } from '../../operator-call.js';
import type { ChargerReply } from '../../port.js';

/** ChangeConfiguration: Accepted, Rejected, RebootRequired or NotSupported. */
export function changeConfiguration(
  target: CallTarget,
  key: string,
  value: string,
): Promise<ChargerReply> {
  return callForReply(target, 'ChangeConfiguration', { key, value });
}
