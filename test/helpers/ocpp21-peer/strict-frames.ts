import { OCPP21 } from 'typed-ocpp';

/**
 * What is wrong with one OCPP-J frame by OCPP 2.1's schemas, as typed-ocpp (its own copy of the
 * OCA's JSON schemas and its own validator, nothing of the gateway's ocpp-rpc) judges it; empty
 * when nothing is. `call` is the CALL a CALLRESULT answers: a result is checked against the
 * schema of the action it answers.
 *
 * typed-ocpp compiles its schemas with ajv's `removeAdditional`: a property the schema does not
 * allow is silently dropped instead of refused. The frame is therefore validated as a copy, and
 * every property the validator dropped is a problem too; a strict station refuses what is not
 * in the schema.
 */
export function frameProblems(frame: unknown, call?: readonly unknown[]): string[] {
  if (!Array.isArray(frame)) return ['not an OCPP-J frame (an array)'];
  const copy: unknown[] = structuredClone(frame);
  const errors = schemaErrors(copy, call);
  if (errors.length > 0) return errors;
  const payloadAt = copy[0] === OCPP21.MessageType.CALLRESULT ? 2 : copy.length - 1;
  return droppedPaths(frame[payloadAt], copy[payloadAt], 'payload').map(
    (path) => `${path}: a property the 2.1 schema does not allow`,
  );
}

function schemaErrors(copy: unknown[], call: readonly unknown[] | undefined): string[] {
  switch (copy[0]) {
    case OCPP21.MessageType.CALL:
    case OCPP21.MessageType.SEND:
      return OCPP21.validateCall(copy) ? [] : [...OCPP21.validateCall.errors];
    case OCPP21.MessageType.CALLRESULT: {
      if (!OCPP21.validateCallResult(copy)) return [...OCPP21.validateCallResult.errors];
      if (call === undefined) return ['a CALLRESULT that answers no call'];
      return OCPP21.checkCallResult(copy, call as OCPP21.Call)
        ? []
        : [...OCPP21.checkCallResult.errors];
    }
    case OCPP21.MessageType.CALLERROR:
    case OCPP21.MessageType.CALLRESULTERROR:
      return OCPP21.validateCallError(copy) ? [] : [...OCPP21.validateCallError.errors];
    default:
      return [`unknown message type ${JSON.stringify(copy[0])}`];
  }
}

/** The paths of `original` that `kept` (the validated copy) no longer holds. */
function droppedPaths(original: unknown, kept: unknown, path: string): string[] {
  if (Array.isArray(original) && Array.isArray(kept)) {
    return original.flatMap((v, i) => droppedPaths(v, kept[i], `${path}[${i}]`));
  }
  if (isRecord(original) && isRecord(kept)) {
    return Object.keys(original).flatMap((key) =>
      key in kept ? droppedPaths(original[key], kept[key], `${path}.${key}`) : [`${path}.${key}`],
    );
  }
  return [];
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
