import Fastify from 'fastify';
import { STRICT_AJV_OPTIONS, quoteSchema, startSchema } from '../../../src/api/schemas.js';
import { serveParent } from './children.js';
import type { BareApiReady } from './messages.js';

/**
 * The reference for the API figures: bare fastify (own process) with the gateway's own route
 * schemas, imported from src/api/schemas.ts, and its strict Ajv options, answering constants. What
 * the gateway does beyond this (auth hook, SQLite reads and the debit, the OCPP round trip,
 * security headers, logging) is what the ratio prices.
 */
const QUOTE = {
  fleetDriver: true,
  quotedAmount: 31_930,
  currency: 'NGN',
  subWalletBalance: 1_000_000,
  socPercent: 0,
  vehicleModel: 'Generic EV',
  socSource: 'unknown',
  socReportedAt: null,
  energyWh: 77_400,
  pricePerKwh: 412.5,
};
const STARTED = {
  sessionId: 'ses_00000000000000000000000000',
  debited: 500,
  remainingBalance: 999_500,
};

serveParent<{ maxAmount: number }, BareApiReady>(async ({ maxAmount }) => {
  const app = Fastify({
    ajv: { customOptions: STRICT_AJV_OPTIONS },
  });
  app.post('/v1/sessions/quote', { schema: quoteSchema }, async () => QUOTE);
  app.post('/v1/sessions', { schema: startSchema(maxAmount) }, async () => STARTED);
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { url };
});
