import ocppRpc from 'ocpp-rpc';
import { ChargerTimeoutError } from '../port.js';

const { RPCError, createRPCError } = ocppRpc;

export interface HandlerArgs {
  method: string;
  params: unknown;
}

/** Answers every call a connection serves: one function per connection, whatever the method. */
export type Dispatch = (args: HandlerArgs) => unknown;

/** The slice of an ocpp-rpc connection the adapters use; keeps the library's loose types at the edge. */
export interface RpcConnection {
  /**
   * Answers calls of `methods` with `dispatch` (others get ocpp-rpc's NotImplemented). One
   * function for all methods, so that each wrapping layer adds one closure per connection rather
   * than one per OCPP action: with 2,000 chargers those were most of the heap a charger cost.
   * `methods` is the version's own set, shared by its connections.
   */
  serve(methods: ReadonlySet<string>, dispatch: Dispatch): void;
  call(method: string, params: unknown, options?: { callTimeoutMs?: number }): Promise<unknown>;
}

/** What this module reads of an ocpp-rpc client. */
export interface RpcClient {
  /** ocpp-rpc's wildcard handler: every call no handler was registered for by name. */
  handle(handler: (args: HandlerArgs) => unknown): void;
  call(method: string, params: unknown, options?: { callTimeoutMs?: number }): Promise<unknown>;
}

/**
 * The ocpp-rpc client as an RpcConnection: one wildcard handler answering `methods`, and an
 * unknown method with the NotImplemented ocpp-rpc itself would send, before any other layer sees
 * it (as when each method was registered by name: that was a table of handlers per connection).
 */
export function servingConnection(client: RpcClient): RpcConnection {
  return new ServingConnection(client);
}

/**
 * Each layer of the pipeline is a class: a connection holds its fields, and `call` and `serve` are
 * the prototype's, not two closures and their context per layer and connection.
 */
class ServingConnection implements RpcConnection {
  constructor(private readonly client: RpcClient) {}

  call(method: string, params: unknown, options?: { callTimeoutMs?: number }): Promise<unknown> {
    return this.client.call(method, params, options);
  }

  serve(methods: ReadonlySet<string>, dispatch: Dispatch): void {
    this.client.handle((args) => {
      if (!methods.has(args.method)) {
        throw createRPCError('NotImplemented', `Unable to handle '${args.method}' calls`, {});
      }
      return dispatch(args);
    });
  }
}

/**
 * Sends a call. A CALLERROR from the charger is an answer (null: treat as refused); no answer
 * in time, or a link that drops while waiting, is ChargerTimeoutError.
 */
export async function callOutcome(
  rpc: RpcConnection,
  method: string,
  params: unknown,
  callTimeoutMs: number,
): Promise<unknown> {
  try {
    return await rpc.call(method, params, { callTimeoutMs });
  } catch (err) {
    if (err instanceof RPCError) return null;
    throw new ChargerTimeoutError(`${method} unanswered: ${(err as Error).message}`);
  }
}

/**
 * JSON schema's "integer" admits 1e308, and no OCPP field means a number beyond 2^53 (an energy
 * register that large is garbage): such a call is refused at the edge, before any handler or
 * SQLite (whose STRICT INTEGER columns would refuse the float) sees it.
 */
function outOfRange(value: unknown, depth = 0): boolean {
  if (typeof value === 'number') return Math.abs(value) > Number.MAX_SAFE_INTEGER;
  if (typeof value !== 'object' || value === null || depth > 16) return false;
  return Object.values(value).some((v) => outOfRange(v, depth + 1));
}

/**
 * ocpp-rpc sends a handler's exception message to the charger in the CALLERROR. Our own
 * CALLERRORs (RPCError) go out as they are; anything else is a bug of ours, whose message may
 * name internals: it goes to the log, and the charger hears only InternalError. Numbers beyond
 * 2^53 are refused first (PropertyConstraintViolation).
 */
export function guardedConnection(
  rpc: RpcConnection,
  onInternalError: (method: string, err: unknown) => void,
): RpcConnection {
  return new GuardedConnection(rpc, onInternalError);
}

class GuardedConnection implements RpcConnection {
  constructor(
    private readonly rpc: RpcConnection,
    private readonly onInternalError: (method: string, err: unknown) => void,
  ) {}

  call(method: string, params: unknown, options?: { callTimeoutMs?: number }): Promise<unknown> {
    return this.rpc.call(method, params, options);
  }

  serve(methods: ReadonlySet<string>, dispatch: Dispatch): void {
    this.rpc.serve(methods, (args) => this.guarded(args, dispatch));
  }

  private async guarded(args: HandlerArgs, dispatch: Dispatch): Promise<unknown> {
    if (outOfRange(args.params)) {
      throw createRPCError('PropertyConstraintViolation', 'a number is out of range');
    }
    try {
      return await dispatch(args);
    } catch (err) {
      if (err instanceof RPCError) throw err;
      this.onInternalError(args.method, err);
      throw createRPCError('InternalError', 'internal error');
    }
  }
}
