import { createRequire } from 'node:module';
import ocppRpc from 'ocpp-rpc';
import type { RpcConnection } from './rpc.js';
import { conformToSchema, type JsonSchema, type NoteDeviation } from './tolerant.js';

const { createRPCError } = ocppRpc;

/**
 * One protocol version's tolerant reading of charger frames (its normalize.ts): the schema-guided
 * repairs of tolerant.ts plus whatever that version's field chargers need beyond them.
 */
export interface FrameNormalizer {
  /** A call from the charger. */
  request(method: string, params: unknown, note: NoteDeviation): unknown;
  /** The charger's CALLRESULT to one of our calls. */
  result(method: string, result: unknown, note: NoteDeviation): unknown;
  /**
   * The answer to a call that still breaks its schema after repair, when refusing it would keep the
   * charger retrying a message that must not be lost (a stop); undefined: refuse with a CALLERROR.
   */
  answerAnyway(method: string, params: unknown): object | undefined;
}

export interface EdgeReports {
  deviation(kind: string, example: unknown): void;
  /** A frame that could not be understood even after repair (kept in ocpp_events). */
  notUnderstood(method: string, problem: string, payload: unknown): void;
  /** Something we were about to send breaks its schema: a bug of ours. */
  ourMistake(method: string, err: unknown): void;
}

interface SchemaValidator {
  subprotocol: string;
  validate(schemaId: string, params: unknown): unknown;
}

const load = createRequire(import.meta.url);
// ocpp-rpc's validators for the official schemas, and the schemas themselves.
const validators = load('ocpp-rpc/lib/standard-validators.js') as SchemaValidator[];
const SCHEMA_FILES: Record<string, string> = {
  'ocpp1.6': 'ocpp-rpc/lib/schemas/ocpp1_6.json',
  'ocpp2.0.1': 'ocpp-rpc/lib/schemas/ocpp2_0_1.json',
};
const schemaCache = new Map<string, Map<string, JsonSchema>>();

/** The official schema of `urn:<Action>.req` / `.conf` in a subprotocol. */
export function schemaOf(subprotocol: string, id: string): JsonSchema | undefined {
  let schemas = schemaCache.get(subprotocol);
  if (!schemas) {
    const file = SCHEMA_FILES[subprotocol];
    const list = file ? (load(file) as (JsonSchema & { $id: string })[]) : [];
    schemas = new Map(list.map((s) => [s.$id, s]));
    schemaCache.set(subprotocol, schemas);
  }
  return schemas.get(id);
}

/** The schema-guided repair of one message of a subprotocol (unknown messages pass as they are). */
export function conformMessage(
  subprotocol: string,
  id: string,
  message: unknown,
  label: string,
  note: NoteDeviation,
): unknown {
  const schema = schemaOf(subprotocol, id);
  return schema ? conformToSchema(schema, message, label, note) : message;
}

interface SchemaError {
  instancePath?: string;
}

/**
 * A call whose only unreadable parts are optional top-level fields (a StopTransaction with garbled
 * transactionData) is understood without them: its required fields carry its meaning.
 */
function withoutUnreadableOptions(
  subprotocol: string,
  validator: SchemaValidator,
  method: string,
  params: unknown,
  note: NoteDeviation,
): unknown {
  const id = `urn:${method}.req`;
  try {
    validator.validate(id, params);
    return params;
  } catch (err) {
    const errors = ((err as { details?: { errors?: SchemaError[] } }).details?.errors ?? []).map(
      (e) => e.instancePath?.split('/')[1],
    );
    const required = new Set(schemaOf(subprotocol, id)?.required ?? []);
    const fields = new Set(errors);
    const droppable =
      typeof params === 'object' &&
      params !== null &&
      errors.length > 0 &&
      [...fields].every((f) => f !== undefined && f !== '' && !required.has(f));
    if (!droppable) return params;
    const kept = { ...(params as Record<string, unknown>) };
    for (const field of fields as Set<string>) {
      note(`${method} ${field} unreadable_optional_field`, kept[field]);
      delete kept[field];
    }
    return kept;
  }
}

/**
 * Tolerant in, strict out. Calls from the charger and its replies to ours are repaired by the
 * version's normalizer (each repair counted as a deviation), then validated against the official
 * schema; what we send (our calls and our answers) is validated as it is, and never repaired.
 */
export function edgeConnection(
  rpc: RpcConnection,
  subprotocol: string,
  normalizer: FrameNormalizer,
  reports: EdgeReports,
): RpcConnection {
  const validator = validators.find((v) => v.subprotocol === subprotocol);
  if (!validator) throw new Error(`no schema validator for ${subprotocol}`);
  const note: NoteDeviation = (kind, example) => reports.deviation(kind, example);
  return {
    call: async (method, params, options) => {
      validator.validate(`urn:${method}.req`, params);
      const raw = await rpc.call(method, params, options);
      const result = normalizer.result(method, raw, note);
      try {
        validator.validate(`urn:${method}.conf`, result);
      } catch (err) {
        reports.notUnderstood(`${method}.conf`, (err as Error).message, raw);
        throw err;
      }
      return result;
    },
    handle: (method, handler) =>
      rpc.handle(method, async (args) => {
        const normalized = normalizer.request(method, args.params, note);
        const params = withoutUnreadableOptions(subprotocol, validator, method, normalized, note);
        try {
          validator.validate(`urn:${method}.req`, params);
        } catch (err) {
          reports.notUnderstood(method, (err as Error).message, args.params);
          const answer = normalizer.answerAnyway(method, params);
          if (answer) return answer;
          throw err;
        }
        const answer = await handler({ ...args, params });
        try {
          validator.validate(`urn:${method}.conf`, answer);
        } catch (err) {
          reports.ourMistake(method, err);
          throw createRPCError('InternalError', 'internal error');
        }
        return answer;
      }),
  };
}
