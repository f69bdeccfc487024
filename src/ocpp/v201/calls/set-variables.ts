import { callForReply, type CallTarget } from '../../operator-call.js';
import { UnsayableCommandError, type ChargerReply } from '../../port.js';
import { splitVariableName } from './variable-name.js';

interface SetVariablesConf {
  setVariableResult: { attributeStatus: string }[];
}

/**
 * SetVariables of one `Component.Variable`: the reply's status is the variable's attributeStatus
 * (Accepted, Rejected, RebootRequired, UnknownComponent, UnknownVariable, ...).
 */
export async function setVariables(
  target: CallTarget,
  key: string,
  value: string,
): Promise<ChargerReply> {
  const name = splitVariableName(key);
  if (!name) {
    throw new UnsayableCommandError(
      `this station speaks OCPP 2.0.1: name its variable as Component.Variable, not ${key}`,
    );
  }
  const reply = await callForReply(target, 'SetVariables', {
    setVariableData: [
      {
        component: { name: name.component },
        variable: { name: name.variable },
        attributeValue: value,
      },
    ],
  });
  if (reply.status === 'CallError') return reply;
  const result = (reply.raw as SetVariablesConf).setVariableResult[0];
  return { status: result?.attributeStatus ?? 'Rejected', raw: reply.raw };
}
