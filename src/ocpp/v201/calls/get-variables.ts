import { callOutcome } from '../../rpc.js';
import type { Session201 } from '../session-context.js';

interface GetVariablesConf {
  getVariableResult?: {
    attributeStatus: string;
    attributeValue?: string;
    component: { name: string };
    variable: { name: string };
  }[];
}

/** The Actual value of one device-model variable, or null when the station does not say. */
export async function getVariable(
  { ctx }: Session201,
  component: string,
  variable: string,
): Promise<string | null> {
  const reply = (await callOutcome(
    ctx.rpc,
    'GetVariables',
    { getVariableData: [{ component: { name: component }, variable: { name: variable } }] },
    ctx.callTimeoutMs,
  )) as GetVariablesConf | null;
  const result = reply?.getVariableResult?.find(
    (r) => r.component.name === component && r.variable.name === variable,
  );
  return result?.attributeStatus === 'Accepted' ? (result.attributeValue ?? null) : null;
}
