import { createRequire } from 'node:module';

interface SchemaValidator {
  subprotocol: string;
  validate(schemaId: string, params: unknown): unknown;
}
const validators = createRequire(import.meta.url)(
  'ocpp-rpc/lib/standard-validators.js',
) as SchemaValidator[];

/** Throws unless `params` is a valid `<action>.req` of the protocol's official schemas. */
export function assertSchemaValid(
  protocol: 'ocpp1.6' | 'ocpp2.0.1',
  action: string,
  params: unknown,
) {
  const validator = validators.find((v) => v.subprotocol === protocol);
  if (!validator) throw new Error(`no validator for ${protocol}`);
  validator.validate(`urn:${action}.req`, params);
}
