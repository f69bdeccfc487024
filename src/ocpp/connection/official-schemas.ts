import { createRequire } from 'node:module';

/** One subprotocol's validator of the official schemas (ocpp-rpc's, or one built here). */
export interface SchemaValidator {
  subprotocol: string;
  validate(schemaId: string, params: unknown): unknown;
}

/** A schema as the official files write it (the fields the edge reads). */
interface OfficialSchema {
  $id: string;
  [key: string]: unknown;
}

const load = createRequire(import.meta.url);
// ocpp-rpc's validators for the official schemas, and the schemas themselves.
const validators = load('ocpp-rpc/lib/standard-validators.js') as SchemaValidator[];
const SCHEMA_FILES: Record<string, string> = {
  'ocpp1.6': 'ocpp-rpc/lib/schemas/ocpp1_6.json',
  'ocpp2.0.1': 'ocpp-rpc/lib/schemas/ocpp2_0_1.json',
  'ocpp2.1': 'ocpp-rpc/lib/schemas/ocpp2_1.json',
};

/**
 * 2.1's file names its schemas `urn:<Action>Request` / `urn:<Action>Response` (a SEND, with no
 * answer, only `urn:<Action>`), where 1.6's and 2.0.1's, and ocpp-rpc's lookups, say
 * `urn:<Action>.req` / `.conf`: ocpp-rpc 2.2.1 finds no 2.1 schema by the name it asks for. The
 * edge renames them once to the one spelling, so every version is looked up alike.
 */
const RENAMED: Record<string, (id: string) => string> = {
  'ocpp2.1': (id) => id.replace(/Request$/, '.req').replace(/Response$/, '.conf'),
};

/**
 * 2.1's enum definitions carry `additionalProperties: false`, a keyword only an object has: ajv
 * prints a strict-mode warning to stderr for each one it compiles (not a pino line, and said on
 * every 2.1 connection's first use of a message). It says nothing about a string, so it goes.
 */
function withoutStringAdditionalProperties(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutStringAdditionalProperties);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  const isString = (node as { type?: unknown }).type === 'string';
  for (const [key, value] of Object.entries(node)) {
    if (isString && key === 'additionalProperties') continue;
    out[key] = withoutStringAdditionalProperties(value);
  }
  return out;
}

const schemaLists = new Map<string, OfficialSchema[]>();

/** A subprotocol's official schemas, each `$id` spelled `urn:<Action>.req` / `.conf`. */
export function officialSchemas(subprotocol: string): OfficialSchema[] {
  let list = schemaLists.get(subprotocol);
  if (!list) {
    const file = SCHEMA_FILES[subprotocol];
    const raw = file ? (load(file) as OfficialSchema[]) : [];
    const rename = RENAMED[subprotocol];
    list = rename
      ? raw.map((s) => ({
          ...(withoutStringAdditionalProperties(s) as OfficialSchema),
          $id: rename(s.$id),
        }))
      : raw;
    schemaLists.set(subprotocol, list);
  }
  return list;
}

const built = new Map<string, SchemaValidator>();

/**
 * The validator of a subprotocol: ocpp-rpc's own where its schema names are the ones asked for,
 * otherwise one built by ocpp-rpc's createValidator on the renamed schemas (on first use).
 */
export function validatorOf(subprotocol: string): SchemaValidator {
  if (RENAMED[subprotocol]) {
    let validator = built.get(subprotocol);
    if (!validator) {
      const { createValidator } = load('ocpp-rpc/lib/validator.js') as {
        createValidator(subprotocol: string, schemas: unknown): SchemaValidator;
      };
      validator = createValidator(subprotocol, officialSchemas(subprotocol));
      built.set(subprotocol, validator);
    }
    return validator;
  }
  const validator = validators.find((v) => v.subprotocol === subprotocol);
  if (!validator) throw new Error(`no schema validator for ${subprotocol}`);
  return validator;
}
