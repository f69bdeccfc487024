import ocppRpc from 'ocpp-rpc';
import type { Dispatch, HandlerArgs, RpcConnection } from './rpc.js';
import { officialSchemas, validatorOf, type SchemaValidator } from './official-schemas.js';
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
  /**
   * Whether a call that is already schema-valid with canonical timestamps still holds something
   * this version repairs (2.0.1: a unit in another case); absent: nothing.
   */
  repairsValid?(method: string, params: unknown): boolean;
}

export interface EdgeReports {
  deviation(kind: string, example: unknown): void;
  /** A frame that could not be understood even after repair (kept in ocpp_events). */
  notUnderstood(method: string, problem: string, payload: unknown): void;
  /** Something we were about to send breaks its schema: a bug of ours. */
  ourMistake(method: string, err: unknown): void;
}

const schemaCache = new Map<string, Map<string, JsonSchema>>();

/** The official schema of `urn:<Action>.req` / `.conf` in a subprotocol. */
export function schemaOf(subprotocol: string, id: string): JsonSchema | undefined {
  let schemas = schemaCache.get(subprotocol);
  if (!schemas) {
    const list = officialSchemas(subprotocol) as (JsonSchema & { $id: string })[];
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

/** The one spelling of an instant the repair writes (`Date.prototype.toISOString`). */
const CANONICAL_TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
/** Deeper than any OCPP message nests a timestamp; a guard against a self-referencing schema. */
const MAX_SCHEMA_DEPTH = 12;

/** Where a message's date-time fields are: each a path of property names, `[]` for list items. */
function timestampPaths(root: JsonSchema): string[][] {
  const paths: string[][] = [];
  const visit = (raw: JsonSchema, path: string[]): void => {
    if (path.length > MAX_SCHEMA_DEPTH) return;
    const ref = raw.$ref?.startsWith('#/definitions/')
      ? root.definitions?.[raw.$ref.slice('#/definitions/'.length)]
      : undefined;
    const schema = ref ?? raw;
    if (schema.format === 'date-time') paths.push(path);
    for (const [key, field] of Object.entries(schema.properties ?? {}))
      visit(field, [...path, key]);
    if (schema.items) visit(schema.items, [...path, '[]']);
  };
  visit(root, []);
  return paths;
}

const timestampPathCache = new Map<string, string[][]>();

function canonicalAt(value: unknown, path: string[], at: number): boolean {
  if (value === undefined) return true;
  if (at === path.length) return typeof value !== 'string' || CANONICAL_TIMESTAMP.test(value);
  if (path[at] === '[]') {
    return !Array.isArray(value) || value.every((item) => canonicalAt(item, path, at + 1));
  }
  if (typeof value !== 'object' || value === null) return true;
  return canonicalAt((value as Record<string, unknown>)[path[at] as string], path, at + 1);
}

/**
 * Whether every timestamp of a message is already spelled as the repair would write it: then a
 * schema-valid message is exactly what the repair would return, and is taken as it is.
 */
function timestampsCanonical(subprotocol: string, id: string, message: unknown): boolean {
  const key = `${subprotocol} ${id}`;
  let paths = timestampPathCache.get(key);
  if (!paths) {
    const schema = schemaOf(subprotocol, id);
    paths = schema ? timestampPaths(schema) : [];
    timestampPathCache.set(key, paths);
  }
  return paths.every((path) => canonicalAt(message, path, 0));
}

/**
 * Whether a charger's call is taken as it came: schema-valid, its timestamps canonical, nothing
 * version-specific to repair. Then the repair would return it unchanged and note nothing (test/
 * edge-fast-path.test.ts holds that for all inputs), so it is validated once and not walked.
 */
export function takenAsSent(
  subprotocol: string,
  normalizer: FrameNormalizer,
  method: string,
  params: unknown,
): boolean {
  const id = `urn:${method}.req`;
  try {
    validatorOf(subprotocol).validate(id, params);
  } catch {
    return false;
  }
  return timestampsCanonical(subprotocol, id, params) && !normalizer.repairsValid?.(method, params);
}

interface SchemaError {
  instancePath?: string;
}

function schemaErrors(err: unknown): string[][] {
  const errors = (err as { details?: { errors?: SchemaError[] } }).details?.errors ?? [];
  return errors.map((e) => (e.instancePath ?? '').split('/').slice(1));
}

/** Rounds of pruning: each may uncover another unreadable part (ajv reports the first it meets). */
const PRUNE_ROUNDS = 4;

/**
 * What cannot be read even after repair is left out when the rest keeps its meaning: an
 * unreadable element of a list (a sampled value in a unit no schema knows, say) is dropped from
 * its list, an unreadable optional top-level field (a StopTransaction's garbled transactionData)
 * is dropped. Required fields are never dropped: a message without them is not understood.
 */
function withoutUnreadableParts(
  subprotocol: string,
  validator: SchemaValidator,
  method: string,
  params: unknown,
  note: NoteDeviation,
): unknown {
  const id = `urn:${method}.req`;
  const required = new Set(schemaOf(subprotocol, id)?.required ?? []);
  let current = params;
  for (let round = 0; round < PRUNE_ROUNDS; round++) {
    let paths: string[][];
    try {
      validator.validate(id, current);
      return current;
    } catch (err) {
      paths = schemaErrors(err);
    }
    if (paths.length === 0 || typeof current !== 'object' || current === null) return params;
    const copy = structuredClone(current) as Record<string, unknown>;
    for (const path of paths) {
      if (!prune(copy, path, required, method, note)) return params;
    }
    current = copy;
  }
  return params;
}

/** Removes the list element or optional top-level field that holds an unreadable part. */
function prune(
  root: Record<string, unknown>,
  path: string[],
  required: Set<string>,
  method: string,
  note: NoteDeviation,
): boolean {
  let lastIndex = -1;
  path.forEach((seg, i) => {
    if (/^\d+$/.test(seg)) lastIndex = i;
  });
  if (lastIndex < 0) {
    const field = path[0];
    if (field === undefined || field === '' || required.has(field)) return false;
    note(`${method} ${field} unreadable_optional_field`, root[field]);
    delete root[field];
    return true;
  }
  let list: unknown = root;
  for (const seg of path.slice(0, lastIndex)) list = (list as Record<string, unknown>)?.[seg];
  const index = Number(path[lastIndex]);
  if (!Array.isArray(list) || index >= list.length) return true; // pruned by an earlier path
  const where = path
    .slice(0, lastIndex)
    .filter((seg) => !/^\d+$/.test(seg))
    .join('[].');
  note(`${method} ${where}[] unreadable_element_dropped`, list[index]);
  list.splice(index, 1);
  return true;
}

/**
 * Tolerant in, strict out. Calls from the charger and its replies to ours are repaired by the
 * version's normalizer (each repair counted as a deviation), then validated against the official
 * schema; what we send (our calls and our answers) is validated as it is, and never repaired.
 * A call that is valid as it came, with its timestamps in the canonical spelling and nothing
 * version-specific to repair, is what the repair would return: it is validated once and taken as
 * it is (the repair walk, a copy of the message and a second validation were most of the edge's
 * cost per message, and almost every message of a conforming charger is such a call).
 */
export function edgeConnection(
  rpc: RpcConnection,
  subprotocol: string,
  normalizer: FrameNormalizer,
  reports: EdgeReports,
): RpcConnection {
  return new EdgeConnection(rpc, subprotocol, normalizer, reports);
}

/** A class: a connection holds its fields, the methods are the prototype's (rpc.ts). */
class EdgeConnection implements RpcConnection {
  private readonly validator: SchemaValidator;

  constructor(
    private readonly rpc: RpcConnection,
    private readonly subprotocol: string,
    private readonly normalizer: FrameNormalizer,
    private readonly reports: EdgeReports,
  ) {
    this.validator = validatorOf(subprotocol);
  }

  /** Made when a frame needs repair (rare): a conforming charger's connection holds none. */
  private get note(): NoteDeviation {
    return (kind, example) => this.reports.deviation(kind, example);
  }

  private answerChecked(method: string, answer: unknown): unknown {
    try {
      this.validator.validate(`urn:${method}.conf`, answer);
    } catch (err) {
      this.reports.ourMistake(method, err);
      throw createRPCError('InternalError', 'internal error');
    }
    return answer;
  }

  async call(
    method: string,
    params: unknown,
    options?: { callTimeoutMs?: number },
  ): Promise<unknown> {
    const { validator } = this;
    validator.validate(`urn:${method}.req`, params);
    const raw = await this.rpc.call(method, params, options);
    const result = this.normalizer.result(method, raw, this.note);
    try {
      validator.validate(`urn:${method}.conf`, result);
    } catch (err) {
      this.reports.notUnderstood(`${method}.conf`, (err as Error).message, raw);
      throw err;
    }
    return result;
  }

  serve(methods: ReadonlySet<string>, dispatch: Dispatch): void {
    this.rpc.serve(methods, (args) => this.read(args, dispatch));
  }

  private async read(args: HandlerArgs, dispatch: Dispatch): Promise<unknown> {
    const { subprotocol, normalizer, validator } = this;
    const { method } = args;
    if (takenAsSent(subprotocol, normalizer, method, args.params)) {
      return this.answerChecked(method, await dispatch(args));
    }
    const note = this.note;
    const normalized = normalizer.request(method, args.params, note);
    const params = withoutUnreadableParts(subprotocol, validator, method, normalized, note);
    try {
      validator.validate(`urn:${method}.req`, params);
    } catch (err) {
      this.reports.notUnderstood(method, (err as Error).message, args.params);
      const answer = normalizer.answerAnyway(method, params);
      if (answer) return answer;
      throw err;
    }
    return this.answerChecked(method, await dispatch({ ...args, params }));
  }
}
