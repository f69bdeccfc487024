import { callOutcome } from '../../rpc.js';
import type { Session16 } from '../session-context.js';

interface GetConfigurationConf {
  configurationKey?: { key: string; value?: string }[];
}

/** The value of one configuration key, or null when the charger does not say. */
export async function getConfiguration({ ctx }: Session16, key: string): Promise<string | null> {
  const reply = (await callOutcome(
    ctx.rpc,
    'GetConfiguration',
    { key: [key] },
    ctx.callTimeoutMs,
  )) as GetConfigurationConf | null;
  return reply?.configurationKey?.find((k) => k.key === key)?.value ?? null;
}
