import { Writable } from 'node:stream';
import { join } from 'node:path';
import { collectDefaultMetrics, Counter, Registry } from 'prom-client';
import { driverFromToken } from '../../../src/api/auth-hooks.js';
import { quoteSchema } from '../../../src/api/schemas.js';
import { createJsonServer } from '../../../src/api/server.js';
import { DriverTokens } from '../../../src/auth/driver-tokens.js';
import { HttpSeries } from '../../../src/metrics/http-series.js';
import { countHttpAnswers, LATENCY_BUCKETS } from '../../../src/metrics/metrics.js';
import { systemClock } from '../../../src/shared/clock.js';
import { createLogger } from '../../../src/shared/log.js';
import { KeyedRateLimiter } from '../../../src/shared/token-bucket.js';
import { openDatabase } from '../../../src/store/database.js';
import { serveParent } from './children.js';
import { CONSTANT_QUOTE } from './constant-quote.js';
import type { ShellApiReady, ShellApiRequest } from './messages.js';

/**
 * The second reference for the quote: the gateway's HTTP shell around a constant answer. The
 * gateway's own server factory (src/api/server.ts: logger, security headers, Host check, error
 * handler, connection tracking), its driver-token check on a real token store (SHA-256, verified
 * cache, rate limiter), its HTTP metrics hook and Node's default metrics, and the route's schema;
 * the handler answers the bare route's constant. What the gateway costs beyond this is the quote
 * itself (the driver's read, the connector, the arithmetic); what this costs beyond the bare route
 * is what every authenticated API answer costs.
 */

serveParent<ShellApiRequest, ShellApiReady>(async ({ dir, drivers }) => {
  const db = openDatabase(join(dir, 'shell.db'));
  db.exec(`INSERT INTO fleets (id, name, created_at) VALUES ('f', 'F', 'x')`);
  const insert = db.prepare(
    `INSERT INTO drivers (id, fleet_id, email, active, created_at, updated_at)
     VALUES (?, 'f', ?, 1, 'x', 'x')`,
  );
  const driverTokens = new DriverTokens(db, systemClock, 86_400);
  const tokens = db.transaction(() =>
    Array.from({ length: drivers }, (_, d) => {
      insert.run(`d${d}`, `d${d}@shell.test`);
      return driverTokens.mint(`d${d}`).token;
    }),
  )();
  const sink = new Writable({ write: (_chunk, _enc, done) => done() });
  const app = createJsonServer({
    log: createLogger('info', sink),
    tls: undefined,
    bodyLimitBytes: 65_536,
  });
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const startRequests = new Counter({
    name: 'start_requests_total',
    help: 'the gateway counts Start results beside its HTTP series',
    labelNames: ['result'],
    registers: [registry],
  });
  const series = new HttpSeries(LATENCY_BUCKETS);
  series.register(registry);
  countHttpAnswers(app, series, startRequests);
  app.decorateRequest('driverId', undefined); // as src/api/routes.ts does
  const limiter = new KeyedRateLimiter(1_000_000, 1_000_000 / 60, systemClock);
  app.post(
    '/v1/sessions/quote',
    {
      schema: quoteSchema,
      onRequest: (request, _reply, done) => {
        request.driverId = driverFromToken(request, driverTokens, limiter);
        done();
      },
    },
    async () => CONSTANT_QUOTE,
  );
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { url, tokens };
});
