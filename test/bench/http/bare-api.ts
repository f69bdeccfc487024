import Fastify from 'fastify';
import { STRICT_AJV_OPTIONS, quoteSchema, startSchema } from '../../../src/api/schemas.js';
import { serveParent } from './children.js';
import { CONSTANT_QUOTE } from './constant-quote.js';
import type { BareApiReady } from './messages.js';

/**
 * The reference for the API figures: bare fastify (own process) with the gateway's own route
 * schemas, imported from src/api/schemas.ts, and its strict Ajv options, answering constants. What
 * the gateway does beyond this (auth hook, SQLite reads and the debit, the OCPP round trip,
 * security headers, logging) is what the ratio prices.
 */
const STARTED = {
  sessionId: 'ses_00000000000000000000000000',
  debited: 500,
  remainingBalance: 999_500,
};

serveParent<{ maxAmount: number }, BareApiReady>(async ({ maxAmount }) => {
  const app = Fastify({
    ajv: { customOptions: STRICT_AJV_OPTIONS },
  });
  app.post('/v1/sessions/quote', { schema: quoteSchema }, async () => CONSTANT_QUOTE);
  app.post('/v1/sessions', { schema: startSchema(maxAmount) }, async () => STARTED);
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { url };
});
