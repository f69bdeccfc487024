import { callForReply, type CallTarget } from '../../operator-call.js';
import type { ChargerReply } from '../../port.js';

/** ChangeConfiguration with the charger's own reply: Accepted, Rejected, RebootRequired or NotSupported. */
export function sendChangeConfiguration(
  target: CallTarget,
  key: string,
  value: string,
): Promise<ChargerReply> {
  return callForReply(target, 'ChangeConfiguration', { key, value });
}

/** The charger took the setting, now or after a reboot. */
export const settingTaken = (reply: ChargerReply): boolean =>
  reply.status === 'Accepted' || reply.status === 'RebootRequired';
