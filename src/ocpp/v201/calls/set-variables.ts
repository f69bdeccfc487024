import { callForReply, type CallTarget } from '../../calls/operator-call.js';
import { UnsayableCommandError, type ChargerReply } from '../../port.js';
import type { SetVariablesConf } from '../messages.js';
import { splitVariableName } from './variable-name.js';

/** [component, variable, value] */
export type VariableSetting = [string, string, string];

/** SetVariables with the station's own reply (one setVariableResult per setting). */
export function sendSetVariables(
  target: CallTarget,
  wanted: VariableSetting[],
): Promise<ChargerReply> {
  return callForReply(target, 'SetVariables', {
    setVariableData: wanted.map(([component, variable, value]) => ({
      component: { name: component },
      variable: { name: variable },
      attributeValue: value,
    })),
  });
}

/** `Component.Variable` of the settings the station did not take (now or after a reboot). */
export function notTaken(wanted: VariableSetting[], reply: ChargerReply): string[] {
  const results =
    reply.status === 'CallError' ? [] : (reply.raw as SetVariablesConf).setVariableResult;
  const taken = new Set(
    results
      .filter((r) => r.attributeStatus === 'Accepted' || r.attributeStatus === 'RebootRequired')
      .map((r) => `${r.component.name}.${r.variable.name}`),
  );
  return wanted.map(([c, v]) => `${c}.${v}`).filter((name) => !taken.has(name));
}

/** The station's attributeStatus for one `Component.Variable` it was sent (CallError: the call's). */
export function resultStatus(reply: ChargerReply, name: string): string {
  if (reply.status === 'CallError') return reply.status;
  const result = (reply.raw as SetVariablesConf).setVariableResult.find(
    (r) => `${r.component.name}.${r.variable.name}` === name,
  );
  return result?.attributeStatus ?? 'Rejected';
}

/**
 * One variable named `Component.Variable`: the reply's status is its attributeStatus (Accepted,
 * Rejected, RebootRequired, UnknownComponent, UnknownVariable, ...).
 */
export async function setVariable(
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
  const reply = await sendSetVariables(target, [[name.component, name.variable, value]]);
  if (reply.status === 'CallError') return reply;
  const result = (reply.raw as SetVariablesConf).setVariableResult[0];
  return { status: result?.attributeStatus ?? 'Rejected', raw: reply.raw };
}

/** The password the station sends in basic auth, as it is (2.0.1 A01: 16 to 40 characters). */
export const setBasicAuthPassword = (target: CallTarget, password: string): Promise<ChargerReply> =>
  setVariable(target, 'SecurityCtrlr.BasicAuthPassword', password);
