import type { ChargerReply, StepOutcome } from '../port.js';

/**
 * A call the charger may not implement (the stop ladder, recovery probes), judged from its own
 * reply: a status in `accepted` is 'accepted', any other status 'rejected', a CALLERROR
 * (NotSupported, NotImplemented, a firmware that never heard of it) or a NotSupported /
 * NotImplemented status 'not_supported'. No answer in time stays ChargerTimeoutError, as for
 * every call (callForReply throws it).
 */
export function stepOf(
  reply: ChargerReply,
  accepted: readonly string[] = ['Accepted'],
): StepOutcome {
  const { status } = reply;
  if (status === 'CallError' || status === 'NotSupported' || status === 'NotImplemented')
    return 'not_supported';
  return accepted.includes(status) ? 'accepted' : 'rejected';
}
