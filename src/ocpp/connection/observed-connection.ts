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
  return observer ? new ObservedConnection(rpc, protocol, observer) : rpc;
}

// performance.now, not hrtime.bigint: no BigInt made twice per call, and microseconds are enough.
const seconds = (fromMs: number) => (performance.now() - fromMs) / 1000;

/** A class: a connection holds its fields, the methods are the prototype's (rpc.ts). */
class ObservedConnection implements RpcConnection {
  constructor(
    private readonly rpc: RpcConnection,
    private readonly protocol: string,
    private readonly observer: OcppObserver,
  ) {}

  async call(
    method: string,
    params: unknown,
    options?: { callTimeoutMs?: number },
  ): Promise<unknown> {
    const from = performance.now();
    try {
      const result = await this.rpc.call(method, params, options);
      this.observer.call(this.protocol, method, 'out', 'ok', seconds(from));
      return result;
    } catch (err) {
      const answered = typeof err === 'object' && err !== null && 'rpcErrorCode' in err;
      this.observer.call(
        this.protocol,
        method,
        'out',
        answered ? 'error' : 'timeout',
        seconds(from),
      );
      throw err;
    }
  }

  serve(methods: ReadonlySet<string>, dispatch: Dispatch): void {
    this.rpc.serve(methods, (args) => this.timed(args, dispatch));
  }

  private async timed(args: HandlerArgs, dispatch: Dispatch): Promise<unknown> {
    const from = performance.now();
    try {
      const result = await dispatch(args);
      this.observer.call(this.protocol, args.method, 'in', 'ok', seconds(from));
      return result;
    } catch (err) {
      this.observer.call(this.protocol, args.method, 'in', 'error', seconds(from));
      throw err;
    }
  }
}
