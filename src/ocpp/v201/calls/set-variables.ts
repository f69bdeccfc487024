import { callOutcome } from '../../rpc.js';
import type { SetVariablesConf } from '../messages.js';
import type { Session201 } from '../session-context.js';

/** [component, variable, value] */
export type VariableSetting = [string, string, string];

/** Sets device-model variables; returns `Component.Variable` of those the station did not take. */
export async function setVariables(
  { ctx }: Session201,
  wanted: VariableSetting[],
): Promise<string[]> {
  const reply = (await callOutcome(
    ctx.rpc,
    'SetVariables',
    {
      setVariableData: wanted.map(([component, variable, value]) => ({
        component: { name: component },
        variable: { name: variable },
        attributeValue: value,
      })),
    },
    ctx.callTimeoutMs,
  )) as SetVariablesConf | null;
  const taken = new Set(
    (reply?.setVariableResult ?? [])
      .filter((r) => r.attributeStatus === 'Accepted' || r.attributeStatus === 'RebootRequired')
      .map((r) => `${r.component.name}.${r.variable.name}`),
  );
  return wanted.map(([c, v]) => `${c}.${v}`).filter((name) => !taken.has(name));
}
