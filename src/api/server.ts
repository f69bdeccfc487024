import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
} from 'fastify';
import type { Logger } from '../shared/log.js';
import type { TlsMaterial } from '../shared/tls-files.js';
import { serverTlsOptions } from '../shared/tls-server.js';
import { compileOnFirstUse, serializersOnFirstUse } from './deferred-compilers.js';
import { answerExpectationFailed, clientErrorHandler } from './edge-answers.js';
import { ApiError, driverApiError, sendApiError, sendError, type ApiErrorCode } from './errors.js';
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
const FRAMEWORK_ERRORS: Record<string, ApiErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_request',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_request',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_request',
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
    ajv: { customOptions: STRICT_AJV_OPTIONS, onCreate: compileOnFirstUse },
    schemaController: { compilersFactory: { buildSerializer: serializersOnFirstUse() } },
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
        ? sendError(reply.headers(headers), 'internal_error', 'internal error')
        : sendError(
            reply.headers(headers),
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
      done(new ApiError('invalid_request', 'the Host header is required'));
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

  app.setErrorHandler((thrown: FastifyError, request, reply) => {
    const error = driverApiError(thrown);
    if (error instanceof ApiError) {
      if (error.retryAfterSeconds !== undefined) {
        reply.header('retry-after', String(error.retryAfterSeconds));
      }
      return sendApiError(reply, error);
    }
    if (thrown.validation) {
      return sendError(reply, 'invalid_request', validationMessage(thrown));
    }
    const framework = thrown.code ? FRAMEWORK_ERRORS[thrown.code] : undefined;
    if (framework) return sendError(reply, framework, thrown.message);
    if (thrown instanceof SyntaxError || thrown.statusCode === 400) {
      return sendError(reply, 'invalid_request', 'the request body is not valid JSON');
    }
    request.log.error({ err: thrown }, 'unhandled error');
    return sendError(reply, 'internal_error', 'internal error');
  });
  return app;
}
