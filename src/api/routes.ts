import type {} from '@fastify/swagger';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { normalizeEmail, type Driver } from '../fleet/roster.js';
import type { ApiDeps } from './deps.js';
import { driverFromToken, fleetFromApiKey } from './auth-hooks.js';
import { KeyedRateLimiter } from '../shared/token-bucket.js';
import { ApiError, sendError } from './errors.js';
import {
  IDEMPOTENCY_KEY_HEADER,
  mintTokenSchema,
  quoteSchema,
  sessionReadSchema,
  startSchema,
  type MintTokenBody,
  type QuoteBody,
  type StartBody,
} from './schemas.js';

declare module 'fastify' {
  interface FastifyRequest {
    fleetId?: string;
    driverId?: string;
  }
}

export function registerRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { roster, charging } = deps;
  // Declared on the request up front, so setting them in the auth hooks keeps every request object
  // one shape (a property added later moves each request to a new hidden class).
  app.decorateRequest('fleetId', undefined);
  app.decorateRequest('driverId', undefined);
  const minute = (n: number) => new KeyedRateLimiter(n, n / 60, deps.clock);
  // Quote and start share one budget per token: both are what a driver's app sends.
  const mintLimiter = minute(deps.rateLimits.mintPerMinute);
  const driverLimiter = minute(deps.rateLimits.driverPerMinute);
  // An app polling its session must not use up the budget its driver needs to start the next one.
  const readLimiter = minute(deps.rateLimits.driverPerMinute);

  /** The token's driver, provided the body names that same driver (scope rule, contract §5). */
  function scopedDriver(driverId: string | undefined, driverEmail: string): Driver {
    const driver = driverId === undefined ? undefined : roster.driver(driverId);
    inScope(driver, driverEmail);
    return driver;
  }

  /** 401 unless the token's driver exists, 403 unless the body names that same driver. */
  function inScope(driver: Driver | undefined, driverEmail: string): asserts driver is Driver {
    if (!driver) throw new ApiError('invalid_token', 'the driver token is not valid');
    if (normalizeEmail(driverEmail) !== driver.email) {
      throw new ApiError(
        'token_scope_mismatch',
        'this token cannot act on another driver’s wallet',
      );
    }
  }

  app.post<{ Body: MintTokenBody }>(
    '/v1/driver-tokens',
    {
      schema: mintTokenSchema,
      onRequest: async (request) => {
        request.fleetId = fleetFromApiKey(request, deps.apiKeys, mintLimiter);
      },
    },
    async (request) => {
      const fleetId = request.fleetId as string;
      const driver = roster.driverByEmail(fleetId, request.body.driverEmail);
      if (!driver || !driver.active) {
        throw new ApiError('driver_not_found', 'no active driver with that email in this fleet');
      }
      request.log.info({ fleetId, driverId: driver.id }, 'driver token minted');
      return deps.driverTokens.mint(driver.id);
    },
  );

  // Callback hooks (fastify turns a throw into the error answer): no promise per request.
  const driverAuth = {
    onRequest: (request: FastifyRequest, _reply: FastifyReply, done: () => void) => {
      request.driverId = driverFromToken(request, deps.driverTokens, driverLimiter);
      done();
    },
  };

  app.post<{ Body: QuoteBody }>(
    '/v1/sessions/quote',
    { schema: quoteSchema, ...driverAuth },
    async (request) => {
      const { chargerId, connectorId, driverEmail } = request.body;
      const found =
        request.driverId === undefined
          ? undefined
          : charging.quoteDriver(request.driverId, chargerId, connectorId);
      inScope(found?.driver, driverEmail);
      const quote = charging.quote(found, chargerId, connectorId);
      const watts = deps.quotePower?.(chargerId, connectorId, quote.energyWh) ?? null;
      if (watts === null || quote.energyWh <= 0) return quote;
      // At the power the site would allocate now; the EV may take less (its own curve).
      return { ...quote, estimatedMinutes: Math.ceil((quote.energyWh / watts) * 60) };
    },
  );

  app.post<{ Body: StartBody }>(
    '/v1/sessions',
    { schema: startSchema(deps.maxAmount), ...driverAuth },
    async (request) => {
      const { chargerId, connectorId, driverEmail, amount } = request.body;
      const driver = scopedDriver(request.driverId, driverEmail);
      const key = request.headers[IDEMPOTENCY_KEY_HEADER];
      return charging.start(
        driver,
        chargerId,
        connectorId,
        amount,
        typeof key === 'string' ? key : undefined,
      );
    },
  );

  app.get<{ Params: { sessionId: string } }>(
    '/v1/sessions/:sessionId',
    {
      schema: sessionReadSchema,
      onRequest: (request, _reply, done) => {
        request.driverId = driverFromToken(request, deps.driverTokens, readLimiter);
        done();
      },
    },
    async (request) => {
      const view = deps.sessionViews.get(request.params.sessionId);
      // Another driver's session is answered exactly like one that does not exist.
      if (!view || view.driverId !== request.driverId) {
        throw new ApiError('session_not_found', 'no such session for this driver');
      }
      const power = deps.sessionPower?.(view.sessionId) ?? null;
      return power ? { ...view, power } : view;
    },
  );
  // GET on the quote's path would otherwise be taken for a session id.
  app.get('/v1/sessions/quote', { schema: { hide: true } }, async (_request, reply) => {
    reply.header('allow', 'POST');
    throw new ApiError('method_not_allowed', 'GET is not allowed on /v1/sessions/quote');
  });

  // Unauthenticated, so it says nothing about the site: the details are GET /admin/v1/health.
  app.get('/healthz', async () => deps.liveness());
  // Readiness beside liveness: 503 while the database takes no write, the listener is down or
  // the gateway drains, so a load balancer or supervisor sends no new work here.
  app.get('/readyz', async (_request, reply) => {
    const problems = deps.readiness();
    if (problems.length > 0) return sendError(reply, 'not_ready', problems.join('; '));
    return { status: 'ready' };
  });
}
