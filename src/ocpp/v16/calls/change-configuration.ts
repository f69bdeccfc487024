import { callOutcome } from '../../rpc.js';
import type { StatusConf } from '../messages.js';
import type { Session16 } from '../session-context.js';

/** Sets one configuration key; true when the charger took it (now or after a reboot). */
export async function changeConfiguration(
  { ctx }: Session16,
  key: string,
  value: string,
): Promise<boolean> {
  const reply = (await callOutcome(
    ctx.rpc,
    'ChangeConfiguration',
    { key, value },
    ctx.callTimeoutMs,
  )) as StatusConf | null;
  return reply?.status === 'Accepted' || reply?.status === 'RebootRequired';
}
