import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { Duplex } from 'node:stream';
import type { Logger } from '../shared/log.js';
import { DRIVER_API_ERRORS, type DriverApiErrorCode } from './error-catalogue.js';

// Required, not imported: an ES import of node:http reads every export, and one of them loads
// Node's bundled undici, about 15-30 ms of the gateway's start-up CPU for a table of reason phrases.
const { STATUS_CODES } = createRequire(import.meta.url)('node:http') as typeof import('node:http');

/**
 * Answers for requests that never reach a route: Node's HTTP parser refusing the bytes
 * (`clientError`), an `Expect` header other than 100-continue, a missing Host. They carry the
 * same `{ error: { code, message } }` body and security headers as every routed answer, and a
 * message that never echoes what the client sent.
 */

interface ParserFailure {
  code: DriverApiErrorCode;
  message: string;
}

/** llhttp's error codes (err.code of `clientError`), grouped by what the client got wrong. */
const PARSER_FAILURES: Record<string, ParserFailure> = {
  HPE_HEADER_OVERFLOW: {
    code: 'headers_too_large',
    message: 'the request line and headers are larger than the server accepts',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    code: 'request_timeout',
    message: 'the request did not arrive in time',
  },
  HPE_INVALID_CONTENT_LENGTH: {
    code: 'invalid_request',
    message: 'Content-Length is not a single non-negative number',
  },
  HPE_UNEXPECTED_CONTENT_LENGTH: {
    code: 'invalid_request',
    message: 'Content-Length is sent twice, or together with Transfer-Encoding',
  },
  HPE_INVALID_TRANSFER_ENCODING: {
    code: 'invalid_request',
    message: 'Transfer-Encoding must be chunked, without Content-Length',
  },
  HPE_INVALID_CHUNK_SIZE: {
    code: 'invalid_request',
    message: 'the chunked body is malformed',
  },
  HPE_INVALID_METHOD: {
    code: 'invalid_request',
    message: 'the request method is not a known HTTP method',
  },
  HPE_INVALID_VERSION: {
    code: 'invalid_request',
    message: 'the HTTP version is not supported',
  },
  HPE_INVALID_HEADER_TOKEN: {
    code: 'invalid_request',
    message: 'a header name or value is malformed',
  },
};

const MALFORMED: ParserFailure = {
  code: 'invalid_request',
  message: 'the request is not well-formed HTTP/1.1',
};

export function errorBody(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

/** A whole HTTP/1.1 error response as bytes for a raw socket; the connection closes after it. */
export function rawErrorResponse(
  code: DriverApiErrorCode,
  message: string,
  headers: Readonly<Record<string, string>>,
): string {
  const { status } = DRIVER_API_ERRORS[code];
  const body = errorBody(code, message);
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    'connection: close',
  ];
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

/** Node's HTTP server keeps the response it is writing on the socket (not in its typings). */
type HttpSocket = Duplex & { _httpMessage?: { headersSent: boolean } | null };

/**
 * fastify's `clientErrorHandler`: Node's parser gave up on the bytes. Answered on the socket when
 * it can still be written to (as Node and fastify do), then the socket is closed. Only the
 * parser's error code is logged: its raw packet may hold an Authorization header.
 */
export function clientErrorHandler(
  headers: Readonly<Record<string, string>>,
  log: Logger,
): (err: NodeJS.ErrnoException, socket: Duplex) => void {
  return (err, socket) => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const failure = (err.code && PARSER_FAILURES[err.code]) || MALFORMED;
    const { status } = DRIVER_API_ERRORS[failure.code];
    log.debug({ code: err.code, status }, 'http request refused by the parser');
    // As Node's own default: never write into a response already on its way out.
    const inFlight = (socket as HttpSocket)._httpMessage;
    if (socket.writable && !inFlight?.headersSent) {
      socket.end(rawErrorResponse(failure.code, failure.message, headers));
    }
    socket.destroy();
  };
}

/**
 * Node's `checkExpectation`: an `Expect` other than 100-continue (which Node honours by itself:
 * it sends 100 Continue and the request goes on). RFC 9110 answers any other one with 417.
 */
export function answerExpectationFailed(
  headers: Readonly<Record<string, string>>,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (_req, res) => {
    const body = errorBody('expectation_failed', 'the only Expect supported is 100-continue');
    res.writeHead(DRIVER_API_ERRORS.expectation_failed.status, {
      ...headers,
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      connection: 'close',
    });
    res.end(body);
  };
}

/** Refuses a WebSocket upgrade on the API's port that is not for a charger, in the API's shape. */
export function refuseUpgrade(
  headers: Readonly<Record<string, string>>,
): (socket: Duplex, status: 400 | 404, message: string) => void {
  return (socket, status, message) => {
    socket.end(
      rawErrorResponse(status === 404 ? 'not_found' : 'invalid_request', message, headers),
    );
  };
}
