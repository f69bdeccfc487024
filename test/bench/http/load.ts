import autocannon from 'autocannon';
import { serveParent } from './children.js';
import type { LoadRequest, LoadResult } from './messages.js';

/**
 * The HTTP load generator (its own process, never the server's): autocannon's programmatic API,
 * POSTing the given targets round-robin over keep-alive connections for a bounded time, and
 * tallying every non-2xx by status and by the body's error.code.
 */
async function run(req: LoadRequest): Promise<LoadResult> {
  let i = req.offset;
  const statuses: Record<string, number> = {};
  const codes: Record<string, number> = {};
  const result = await autocannon({
    url: req.url + req.path,
    method: 'POST',
    connections: req.connections,
    ...(req.amount === undefined ? { duration: req.seconds } : { amount: req.amount }),
    timeout: 30,
    requests: [
      {
        method: 'POST',
        path: req.path,
        setupRequest: (request) => {
          const target = req.targets[i % req.targets.length];
          i += 1;
          if (!target) throw new Error('no load targets');
          return {
            ...request,
            body: target.body,
            headers: { 'content-type': 'application/json', ...target.headers },
          };
        },
        onResponse: (status, body) => {
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (status >= 300) {
            let code = 'unparsed body';
            try {
              code = (JSON.parse(body) as { error?: { code?: string } }).error?.code ?? code;
            } catch {
              // Not JSON: reported as such.
            }
            codes[code] = (codes[code] ?? 0) + 1;
          }
        },
      },
    ],
  });
  const ok = result['2xx'];
  return {
    responses: Object.values(statuses).reduce((a, b) => a + b, 0),
    ok,
    okPerSecond: ok / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    statuses,
    codes,
    errors: result.errors,
    timeouts: result.timeouts,
    nextOffset: i,
  };
}

serveParent(run);
