/**
 * Tolerant reading of what a charger sends, guided by the official JSON schema of the message:
 * every departure that does not change the message's meaning is repaired and reported as a
 * deviation, so that the strict validation that follows only refuses what cannot be understood.
 * What is repaired:
 * - a number where a string is due (1.6 sampledValue.value: 1234), a numeric string where a
 *   number is due ("1234"), a decimal where an integer is due (meterStart 1234.5, rounded: Wh),
 *   "true"/"false" where a boolean is due;
 * - an enumeration value in another case (`kwh`, `accepted`) taken as the schema spells it; an
 *   unknown one taken as `Other` / `OtherError` where the enumeration has it (the raw value is the
 *   deviation's example);
 * - fields the schema does not know (vendor extensions) and optional fields sent as null or as an
 *   empty enumeration value: dropped;
 * - timestamps: any parseable date-time is rewritten as UTC with milliseconds (one spelling per
 *   instant, so repeats compare equal); one without a zone is taken as UTC;
 * - free text longer than the schema allows: cut (never an identifier: those are meaning);
 * - an idTag / idToken padded with spaces or NULs (a fixed-width buffer sent whole): the padding
 *   dropped (identifiers.ts; case is no deviation, the protocols compare it case-insensitively).
 */
import { isPadded, unpadded } from './identifiers.js';

export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: unknown[];
  format?: string;
  maxLength?: number;
  definitions?: Record<string, JsonSchema>;
}

export type NoteDeviation = (kind: string, example: unknown) => void;

const MISSING = Symbol('missing');

/** Strings whose every character is meaning: cutting them would name someone or something else. */
const IDENTIFIERS = new Set(['idTag', 'parentIdTag', 'idToken', 'transactionId', 'groupIdToken']);
/**
 * Identifiers of a driver, whose padding is a charger's buffer, not meaning. Not transactionId: a
 * station's own id is sent back to it as it spelled it.
 */
const PADDED_IDENTIFIERS = new Set(['idTag', 'parentIdTag', 'idToken']);

const ZONE = /(?:Z|[+-]\d\d(?::?\d\d)?)$/i;
/** An offset of whole hours without minutes ("+02"), which Date.parse does not read. */
const HOURS_ONLY = /[+-]\d\d$/;
const NUMERIC = /^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?\s*$/i;

function typeOf(schema: JsonSchema): string | undefined {
  return Array.isArray(schema.type) ? schema.type[0] : schema.type;
}

interface Walk {
  root: JsonSchema;
  note: NoteDeviation;
  label: string;
}

function resolve(walk: Walk, schema: JsonSchema): JsonSchema {
  if (!schema.$ref?.startsWith('#/definitions/')) return schema;
  return walk.root.definitions?.[schema.$ref.slice('#/definitions/'.length)] ?? schema;
}

function deviate(walk: Walk, path: string, rule: string, example: unknown): void {
  walk.note(`${walk.label} ${path || '.'} ${rule}`, example);
}

function conformString(walk: Walk, schema: JsonSchema, value: unknown, path: string, key: string) {
  let s: string;
  if (typeof value === 'number' || typeof value === 'boolean') {
    deviate(walk, path, 'number_as_string', value);
    s = String(value);
  } else if (typeof value === 'string') s = value;
  else return value;
  if (schema.enum) return conformEnum(walk, schema.enum as string[], s, path);
  if (schema.format === 'date-time') return conformTimestamp(walk, s, path);
  if (PADDED_IDENTIFIERS.has(key) && isPadded(s)) {
    deviate(walk, path, 'identifier_padded', s);
    s = unpadded(s);
  }
  if (schema.maxLength !== undefined && s.length > schema.maxLength && !IDENTIFIERS.has(key)) {
    deviate(walk, path, 'string_too_long', s);
    return s.slice(0, schema.maxLength);
  }
  return s;
}

function conformEnum(walk: Walk, values: string[], s: string, path: string): unknown {
  if (values.includes(s)) return s;
  const folded = values.find((v) => v.toLowerCase() === s.trim().toLowerCase());
  if (folded !== undefined) {
    deviate(walk, path, 'enum_case', s);
    return folded;
  }
  if (s.trim() === '') {
    deviate(walk, path, 'empty_enum', s);
    return MISSING;
  }
  const other = values.find((v) => v === 'Other' || v === 'OtherError');
  if (other !== undefined) {
    deviate(walk, path, 'unknown_enum', s);
    return other;
  }
  return s;
}

function conformTimestamp(walk: Walk, s: string, path: string): string {
  const t = s.trim();
  const zoned = ZONE.test(t);
  const ms = Date.parse(!zoned ? `${t}Z` : HOURS_ONLY.test(t) ? `${t}:00` : t);
  if (!Number.isFinite(ms)) return s;
  if (!zoned) deviate(walk, path, 'timestamp_without_zone', s);
  return new Date(ms).toISOString();
}

function conformNumber(walk: Walk, integer: boolean, value: unknown, path: string): unknown {
  let n = value;
  if (typeof value === 'string' && NUMERIC.test(value)) {
    deviate(walk, path, 'string_as_number', value);
    n = Number(value);
  }
  if (integer && typeof n === 'number' && Number.isFinite(n) && !Number.isInteger(n)) {
    deviate(walk, path, 'decimal_integer', value);
    return Math.round(n);
  }
  return n;
}

function conformObject(walk: Walk, schema: JsonSchema, value: object, path: string): unknown {
  const out: Record<string, unknown> = {};
  const required = new Set(schema.required ?? []);
  for (const [key, field] of Object.entries(value)) {
    const fieldPath = path ? `${path}.${key}` : key;
    const fieldSchema = schema.properties?.[key];
    if (!fieldSchema) {
      if (schema.additionalProperties === false) {
        deviate(walk, fieldPath, 'unknown_field', field);
        continue;
      }
      out[key] = field;
      continue;
    }
    if (field === null && !required.has(key)) {
      deviate(walk, fieldPath, 'null_field', null);
      continue;
    }
    const conformed = conform(walk, fieldSchema, field, fieldPath, key);
    if (conformed === MISSING) {
      if (required.has(key)) out[key] = field;
      continue;
    }
    out[key] = conformed;
  }
  return out;
}

function conform(walk: Walk, raw: JsonSchema, value: unknown, path: string, key: string): unknown {
  const schema = resolve(walk, raw);
  switch (typeOf(schema)) {
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value)
        ? conformObject(walk, schema, value, path)
        : value;
    case 'array':
      return Array.isArray(value) && schema.items
        ? value
            .map((item) => conform(walk, schema.items as JsonSchema, item, `${path}[]`, key))
            .filter((item) => item !== MISSING)
        : value;
    case 'string':
      return conformString(walk, schema, value, path, key);
    case 'integer':
      return conformNumber(walk, true, value, path);
    case 'number':
      return conformNumber(walk, false, value, path);
    case 'boolean':
      if (value === 'true' || value === 'false') {
        deviate(walk, path, 'string_as_boolean', value);
        return value === 'true';
      }
      return value;
    default:
      return value;
  }
}

/**
 * The message as its schema spells it, as far as a repair keeps its meaning; `label` names the
 * message in the deviation kinds (e.g. "MeterValues", "RemoteStartTransaction.conf").
 */
export function conformToSchema(
  schema: JsonSchema,
  message: unknown,
  label: string,
  note: NoteDeviation,
): unknown {
  const result = conform({ root: schema, note, label }, schema, message, '', '');
  return result === MISSING ? message : result;
}
