import type { OperatorRoutes } from '../operator/api.js';
import { errorResponses } from '../operator/schemas.js';
import { securityHeaders } from '../api/security-headers.js';
import type { ConsoleEventHub } from './event-hub.js';

export interface EventStreamOptions {
  /** A comment line this often keeps proxies and the browser from timing the stream out. */
  heartbeatMs: number;
  /**
   * Bytes waiting for one slow client beyond what its socket took: past it the client is dropped
   * (its browser reconnects and reloads the state) rather than buffered without bound.
   */
  maxQueuedBytes: number;
  /** The listener is HTTPS (for the security headers). */
  tls: boolean;
}

export const EVENT_STREAM_DEFAULTS = { heartbeatMs: 15_000, maxQueuedBytes: 256 * 1024 } as const;

/**
 * GET /admin/v1/events: the hub's events as Server-Sent Events (`event:` the name, `data:` its
 * JSON, `id:` a counter). It is an operator route, so the guard has already taken a Bearer
 * credential or the console's cookie; a viewer may listen.
 */
export function eventStreamRoutes(
  hub: ConsoleEventHub,
  options: EventStreamOptions,
): OperatorRoutes {
  const headers = {
    ...securityHeaders(options.tls),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    // A buffering reverse proxy would hold the events back.
    'x-accel-buffering': 'no',
  };
  return (app, deps) => {
    app.get(
      '/events',
      {
        schema: {
          summary: 'Live events for the console (text/event-stream; docs/console.md)',
          tags: ['console'],
          response: {
            200: { description: 'text/event-stream', type: 'string' },
            ...errorResponses,
          },
        },
      },
      (request, reply) => {
        reply.hijack();
        const res = reply.raw;
        res.writeHead(200, headers);
        res.write('retry: 3000\n\n');
        let open = true;
        const close = () => {
          if (!open) return;
          open = false;
          unsubscribe();
          clearInterval(heartbeat);
        };
        const unsubscribe = hub.subscribe((event, seq) => {
          if (!open) return;
          if (res.writableLength > options.maxQueuedBytes) {
            deps.log.warn(
              { operator: request.operator?.name, queuedBytes: res.writableLength },
              'console event stream too slow: dropped',
            );
            close();
            res.destroy();
            return;
          }
          res.write(`id: ${seq}\nevent: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`);
        });
        const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), options.heartbeatMs);
        heartbeat.unref();
        res.on('close', close);
      },
    );
  };
}
