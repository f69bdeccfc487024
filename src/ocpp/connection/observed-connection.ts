import { performance } from 'node:perf_hooks';
import type { RpcConnection } from './rpc.js';

export type OcppDirection = 'in' | 'out';
/** ok: answered with a result; error: a CALLERROR (or our handler threw); timeout: unanswered. */
export type OcppOutcome = 'ok' | 'error' | 'timeout';

/** Told of every call on a charger connection once it is answered (or not). */
export interface OcppObserver {
  call(
    protocol: string,
    action: string,
    direction: OcppDirection,
    outcome: OcppOutcome,
    seconds: number,
  ): void;
}

/**
 * Times every call both ways: an incoming one from arrival to our answer, an outgoing one from
 * sending to the charger's answer. Without an observer the connection is returned as it is.
 */
export function observedConnection(
  rpc: RpcConnection,
  protocol: string,
  observer: OcppObserver | undefined,
): RpcConnection {
  if (!observer) return rpc;
  // performance.now, not hrtime.bigint: no BigInt made twice per call, and microseconds are enough.
  const seconds = (fromMs: number) => (performance.now() - fromMs) / 1000;
  return {
    call: async (method, params, options) => {
      const from = performance.now();
      try {
        const result = await rpc.call(method, params, options);
        observer.call(protocol, method, 'out', 'ok', seconds(from));
        return result;
      } catch (err) {
        const answered = typeof err === 'object' && err !== null && 'rpcErrorCode' in err;
        observer.call(protocol, method, 'out', answered ? 'error' : 'timeout', seconds(from));
        throw err;
      }
    },
    serve: (methods, dispatch) =>
      rpc.serve(methods, async (args) => {
        const from = performance.now();
        try {
          const result = await dispatch(args);
          observer.call(protocol, args.method, 'in', 'ok', seconds(from));
          return result;
        } catch (err) {
          observer.call(protocol, args.method, 'in', 'error', seconds(from));
          throw err;
        }
      }),
  };
}
