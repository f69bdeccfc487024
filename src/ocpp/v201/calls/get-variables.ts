import { callForReply, type CallTarget } from '../../calls/operator-call.js';
import type { ConfigurationEntry, ConfigurationReport } from '../../port.js';
import { splitVariableName } from './variable-name.js';

/**
 * What a read without names asks for: the standard variables the gateway itself depends on or an
 * operator commonly tunes. A station's whole device model comes only as a GetBaseReport answered
 * by a stream of NotifyReport messages, which this synchronous read does not wait for.
 */
export const DEFAULT_VARIABLES = [
  'OCPPCommCtrlr.HeartbeatInterval',
  'OCPPCommCtrlr.WebSocketPingInterval',
  'SampledDataCtrlr.TxUpdatedInterval',
  'SampledDataCtrlr.TxUpdatedMeasurands',
  'SampledDataCtrlr.TxStartedMeasurands',
  'SampledDataCtrlr.TxEndedMeasurands',
  'AlignedDataCtrlr.Interval',
  'AlignedDataCtrlr.Measurands',
  'TxCtrlr.EVConnectionTimeOut',
  'TxCtrlr.TxStartPoint',
  'TxCtrlr.TxStopPoint',
  'AuthCtrlr.AuthorizeRemoteStart',
] as const;

interface GetVariablesConf {
  getVariableResult: {
    attributeStatus: string;
    attributeValue?: string;
    component: { name: string };
    variable: { name: string };
  }[];
}

/** GetVariables for `Component.Variable` names; unknown ones come back as unknownKeys. */
export async function readVariables(
  target: CallTarget,
  keys: readonly string[],
): Promise<ConfigurationReport> {
  const wanted = keys.length === 0 ? DEFAULT_VARIABLES : keys;
  const named = wanted.flatMap((key) => {
    const name = splitVariableName(key);
    return name ? [{ key, ...name }] : [];
  });
  const malformed = wanted.filter((key) => splitVariableName(key) === null);
  if (named.length === 0) return { entries: [], unknownKeys: [...malformed], raw: null };
  const reply = await callForReply(target, 'GetVariables', {
    getVariableData: named.map((n) => ({
      component: { name: n.component },
      variable: { name: n.variable },
    })),
  });
  if (reply.status === 'CallError') {
    return { entries: [], unknownKeys: [...wanted], raw: reply.raw };
  }
  const results = (reply.raw as GetVariablesConf).getVariableResult;
  const entries: ConfigurationEntry[] = [];
  const unknownKeys = [...malformed];
  for (const r of results) {
    const key = `${r.component.name}.${r.variable.name}`;
    if (r.attributeStatus === 'UnknownVariable' || r.attributeStatus === 'UnknownComponent') {
      unknownKeys.push(key);
    } else {
      entries.push({
        key,
        value: r.attributeValue ?? null,
        readonly: null,
        ...(r.attributeStatus === 'Accepted' ? {} : { status: r.attributeStatus }),
      });
    }
  }
  return { entries, unknownKeys, raw: reply.raw };
}

/** The Actual value of one `Component.Variable` in a GetVariables answer, or null when not said. */
export function variableValue(report: ConfigurationReport, key: string): string | null {
  const entry = report.entries.find((e) => e.key === key);
  return entry && entry.status === undefined ? entry.value : null;
}
