import type { FastifyError } from 'fastify';

/** A one-line message that names the offending field, from Ajv's first error. */
export function validationMessage(error: FastifyError): string {
  const first = error.validation?.[0];
  if (!first) return error.message;
  const params = first.params as Record<string, unknown>;
  const path = first.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (first.keyword === 'required')
    return `missing required field ${String(params.missingProperty)}`;
  if (first.keyword === 'additionalProperties') {
    return `unknown field ${String(params.additionalProperty)}`;
  }
  // Only Idempotency-Key is checked among the headers; name it as the client spells it.
  if (error.validationContext === 'headers') {
    return `header Idempotency-Key must be 1 to 255 visible ASCII characters without spaces`;
  }
  return `${path === '' ? 'body' : path} ${first.message ?? 'is invalid'}`;
}
