import { performance } from 'node:perf_hooks';
import type { Dispatch, HandlerArgs, RpcConnection } from './rpc.js';

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
    // Not an async function: on every message of every charger, its own promise and await were
    // 2 % of the gateway's CPU at saturation. The observer is told before ocpp-rpc (which awaits
    // the same promise, registered after this) answers, as before.
    serve: (methods, dispatch) =>
      rpc.serve(methods, (args) => {
        const from = performance.now();
        const answered = settled(dispatch, args);
        answered.then(
          () => observer.call(protocol, args.method, 'in', 'ok', seconds(from)),
          () => observer.call(protocol, args.method, 'in', 'error', seconds(from)),
        );
        return answered;
      }),
  };
}

/** What `dispatch` answers, as a promise (a synchronous throw as a rejection). */
function settled(dispatch: Dispatch, args: HandlerArgs): Promise<unknown> {
  try {
    return Promise.resolve(dispatch(args));
  } catch (err) {
    return Promise.reject(err as Error);
  }
}
