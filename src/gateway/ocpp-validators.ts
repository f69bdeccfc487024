import { createRequire, Module } from 'node:module';

/**
 * ocpp-rpc builds its validators for OCPP 1.6, 2.0.1 and 2.1 when it is first required
 * (lib/standard-validators.js, which its client and server require): ajv, then each schema file
 * added, about 70 ms of start-up (2.1's, under ocpp-rpc's names, the edge never asks for:
 * connection/official-schemas.ts builds its own). This module, imported
 * before anything that loads ocpp-rpc, puts in that file's place in the require cache the same
 * three validators, each built by ocpp-rpc's own createValidator on its first call: the gateway
 * validates in edge.ts, ocpp-rpc only in strict mode, which the gateway leaves off. A process
 * that loaded ocpp-rpc before (a test, a simulator) keeps ocpp-rpc's own. No dependency file is
 * edited; test/ocpp-validators.test.ts holds the lazy ones to ocpp-rpc's answers.
 */
interface SchemaValidator {
  readonly subprotocol: string;
  validate(schemaId: string, params: unknown): unknown;
}

const load = createRequire(import.meta.url);
const STANDARD = load.resolve('ocpp-rpc/lib/standard-validators.js');

const SCHEMAS: Record<string, string> = {
  'ocpp1.6': 'ocpp-rpc/lib/schemas/ocpp1_6.json',
  'ocpp2.0.1': 'ocpp-rpc/lib/schemas/ocpp2_0_1.json',
  'ocpp2.1': 'ocpp-rpc/lib/schemas/ocpp2_1.json',
};

/** ocpp-rpc's validator of one subprotocol, built on its first call. */
export function lazyValidator(subprotocol: string, schemaFile: string): SchemaValidator {
  let built: SchemaValidator | undefined;
  return {
    subprotocol,
    validate(schemaId, params) {
      if (!built) {
        const { createValidator } = load('ocpp-rpc/lib/validator.js') as {
          createValidator(subprotocol: string, schemas: unknown): SchemaValidator;
        };
        built = createValidator(subprotocol, load(schemaFile));
      }
      return built.validate(schemaId, params);
    },
  };
}

if (!load.cache[STANDARD]) {
  const lazy = new Module(STANDARD);
  lazy.filename = STANDARD;
  lazy.loaded = true;
  lazy.exports = Object.entries(SCHEMAS).map(([protocol, file]) => lazyValidator(protocol, file));
  load.cache[STANDARD] = lazy;
}
