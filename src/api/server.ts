import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
} from 'fastify';
import { ChargingError } from '../charging/errors.js';
import type { Logger } from '../shared/log.js';
import type { TlsMaterial } from '../shared/tls-files.js';
import { serverTlsOptions } from '../shared/tls-server.js';
import { answerExpectationFailed, clientErrorHandler } from './edge-answers.js';
import { ApiError, CHARGING_ERROR_STATUS, sendError } from './errors.js';
import { lazyChildLogger } from './request-logger.js';
import { STRICT_AJV_OPTIONS } from './schemas.js';
import { securityHeaders } from './security-headers.js';
import { validationMessage } from './validation-message.js';

export interface JsonServerOptions {
  log: Logger;
  /** Serve over HTTPS with this certificate. */
  tls: TlsMaterial | undefined;
  bodyLimitBytes: number;
}

/** Fastify's own error codes for requests that never reach a handler. */
const FRAMEWORK_ERRORS: Record<string, { status: number; code: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'payload_too_large' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, code: 'unsupported_media_type' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: 'invalid_request' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'invalid_request' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'invalid_request' },
};

/**
 * A fastify server as every HTTP face of the gateway has it (the driver API and the operator
 * API): strict JSON in, `{error:{code,message}}` out, security headers, no request log at info.
 */
export function createJsonServer(options: JsonServerOptions): FastifyInstance {
  const headers = securityHeaders(options.tls !== undefined);
  // Node would answer a missing Host itself, with an empty body: the hook below does it instead.
  const server = { requireHostHeader: false };
  // With TLS the server is an https.Server; the routes do not care which.
  const app = Fastify({
    ...(options.tls
      ? { https: { ...serverTlsOptions(options.tls), ...server } }
      : { http: server }),
    loggerInstance: options.log as FastifyBaseLogger,
    bodyLimit: options.bodyLimitBytes,
    ajv: { customOptions: STRICT_AJV_OPTIONS },
    // fastify logs two lines per request at info; at thousands of requests a second they cost
    // about 40 % of a quote's throughput (npm run bench). One debug line per response instead;
    // the business events (token minted, session debited, settled) stay at info.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLogger,
    return503OnClosing: true,
    forceCloseConnections: true,
    // Requests refused before routing, in the API's error shape with its headers: a path that is
    // not valid percent-encoding (fastify runs no hook for it, so the headers are set here), and
    // bytes Node's parser cannot read.
    frameworkErrors: (error, _request, reply) =>
      error.code === 'FST_ERR_ASYNC_CONSTRAINT'
        ? sendError(reply.headers(headers), 500, 'internal_error', 'internal error')
        : sendError(
            reply.headers(headers),
            400,
            'invalid_request',
            'the request path is not valid percent-encoding',
          ),
    clientErrorHandler: clientErrorHandler(headers, options.log),
  }) as unknown as FastifyInstance;
  app.server.on('checkExpectation', answerExpectationFailed(headers));

  // The API speaks JSON only; fastify would otherwise hand text/plain bodies to the routes.
  app.removeContentTypeParser('text/plain');

  // One synchronous hook, the first to run for every routed request (404s included): the
  // security headers go on the reply before anything can answer it (an error answer keeps them;
  // a route that needs another policy sets its own later), then HTTP/1.1's Host rule (RFC 9112
  // §3.2; Node's own refusal has no body). A callback hook costs no promise per request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(headers);
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      done(new ApiError(400, 'invalid_request', 'the Host header is required'));
      return;
    }
    done();
  });

  // Every answer is written at the end of the event loop's turn (its check phase), after the
  // requests read in the same turn have been handled, instead of the moment it is ready. Under
  // load, a client's process is then woken once for the turn's answers, not once for each: on the
  // bench's VM a quote cost 13 µs less CPU this way (docs/benchmarks.md). An idle server loses
  // nothing: the check phase follows the poll phase that read the request.
  // When the server starts closing, answers are no longer deferred, and fastify closes the
  // connections only after one more turn: the answers deferred before it (a Start refused because
  // closing dropped its charger, for one) are written first, in the order they were made.
  // No per-answer bookkeeping: a Map of the waiting answers measured slower in alternating runs.
  let closing = false;
  app.addHook('onSend', (_request, _reply, payload, done) => {
    if (closing) done(null, payload);
    else setImmediate(done, null, payload);
  });
  app.addHook('preClose', (done) => {
    closing = true;
    setImmediate(done);
  });

  // The route's pattern, not the raw URL: nothing a client typed reaches the log unparsed. The
  // level is fixed at start-up, so below debug the hook is not even registered.
  if (options.log.isLevelEnabled('debug'))
    app.addHook('onResponse', async (request, reply) => {
      request.log.debug(
        {
          method: request.method,
          route: request.routeOptions.url ?? 'unmatched',
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime * 10) / 10,
        },
        'request',
      );
    });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof ApiError) {
      if (error.retryAfterSeconds !== undefined) {
        reply.header('retry-after', String(error.retryAfterSeconds));
      }
      return sendError(reply, error.status, error.code, error.message);
    }
    if (error instanceof ChargingError) {
      const mapped = CHARGING_ERROR_STATUS[error.code];
      // The first attempt is waiting for its charger (at most ocpp.callTimeoutSeconds).
      if (error.code === 'idempotency_key_in_progress') reply.header('retry-after', '1');
      return sendError(reply, mapped.status, mapped.code, error.message);
    }
    if (error.validation) {
      return sendError(reply, 400, 'invalid_request', validationMessage(error));
    }
    const framework = error.code ? FRAMEWORK_ERRORS[error.code] : undefined;
    if (framework) return sendError(reply, framework.status, framework.code, error.message);
    if (error instanceof SyntaxError || error.statusCode === 400) {
      return sendError(reply, 400, 'invalid_request', 'the request body is not valid JSON');
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, 500, 'internal_error', 'internal error');
  });
  return app;
}
