import { createRequire } from 'node:module';
import ocppRpc from 'ocpp-rpc';

// ocpp-rpc 2.2.1 ships OCPP 2.1's schemas with the ids the 2.1 release gave them
// (`urn:BootNotificationRequest` / `Response`), but its strict mode looks them up as
// `urn:BootNotification.req` / `.conf`, as for 1.6 and 2.0.1: every 2.1 call would fail with
// "Schema ... is missing". This is the same schema file under the ids strict mode asks for. Its
// enumerations also carry `additionalProperties: false`, meaningless on a string, which ajv
// warns about once per type: left out, the schemas accept exactly what they accepted.

const load = createRequire(import.meta.url);

interface JsonSchema {
  $id: string;
  definitions?: Record<string, { type?: string; additionalProperties?: unknown }>;
}

/** `urn:XRequest` → `urn:X.req`, `urn:XResponse` → `urn:X.conf`; other ids stay. */
export function strictModeId(id: string): string {
  return id.replace(/Request$/, '.req').replace(/Response$/, '.conf');
}

let built: ReturnType<typeof ocppRpc.createValidator> | undefined;

/** A strict-mode validator for `ocpp2.1` (pass it as `strictModeValidators`), built once. */
export function ocpp21Validator(): ReturnType<typeof ocppRpc.createValidator> {
  if (!built) {
    const schemas = load('ocpp-rpc/lib/schemas/ocpp2_1.json') as JsonSchema[];
    const renamed = schemas.map((schema) => ({
      ...schema,
      $id: strictModeId(schema.$id),
      definitions: Object.fromEntries(
        Object.entries(schema.definitions ?? {}).map(([name, definition]) => {
          if (definition.type === 'object') return [name, definition];
          const rest = { ...definition };
          delete rest.additionalProperties;
          return [name, rest];
        }),
      ),
    }));
    built = ocppRpc.createValidator('ocpp2.1', renamed);
  }
  return built;
}
