import { callForReply, type CallTarget } from '../../calls/operator-call.js';
import type { ConfigurationReport } from '../../port.js';

interface GetConfigurationConf {
  configurationKey?: { key: string; readonly: boolean; value?: string }[];
  unknownKey?: string[];
}

/** GetConfiguration: no keys asks for every key the charger has. */
export async function readConfiguration(
  target: CallTarget,
  keys: readonly string[],
): Promise<ConfigurationReport> {
  const reply = await callForReply(
    target,
    'GetConfiguration',
    keys.length === 0 ? {} : { key: [...keys] },
  );
  if (reply.status === 'CallError') return { entries: [], unknownKeys: [...keys], raw: reply.raw };
  const conf = reply.raw as GetConfigurationConf;
  return {
    entries: (conf.configurationKey ?? []).map((k) => ({
      key: k.key,
      value: k.value ?? null,
      readonly: k.readonly,
    })),
    unknownKeys: conf.unknownKey ?? [],
    raw: reply.raw,
  };
}

/** The value of one key in a GetConfiguration answer, or null when the charger does not say. */
export function configurationValue(report: ConfigurationReport, key: string): string | null {
  return report.entries.find((e) => e.key === key)?.value ?? null;
}
