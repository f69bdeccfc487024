import ocppRpc from 'ocpp-rpc';
import type { IncomingCalls, OutgoingCalls } from './ocpp-types.js';

// ocpp-rpc is CommonJS; named ESM imports of some of its exports fail at runtime.
const { RPCClient } = ocppRpc;

export type RpcClient = InstanceType<typeof RPCClient>;
type RpcClientOptions = ConstructorParameters<typeof RPCClient>[0];

/** Returned by a handler to leave a call unanswered (the central system then times out). */
// The .d.ts declares NOREPLY as an object, but at runtime the package exports the bare symbol.
export const NO_REPLY = ocppRpc.NOREPLY as unknown as symbol;

export interface RpcClientSettings {
  endpoint: string;
  identity: string;
  password?: string;
  reconnect: boolean;
  callTimeoutMs: number;
}

export function createRpcClient(settings: RpcClientSettings): RpcClient {
  const options: Partial<RpcClientOptions> = {
    endpoint: settings.endpoint,
    identity: settings.identity,
    protocols: ['ocpp1.6'],
    // Strict mode validates both directions, so a schema-invalid message is a simulator bug
    // that surfaces as a rejected call instead of confusing the central system.
    strictMode: true,
    password: settings.password ?? null,
    reconnect: settings.reconnect,
    callTimeoutMs: settings.callTimeoutMs,
  };
  // The constructor type lists every option as required although the library fills in defaults.
  return new RPCClient(options as RpcClientOptions);
}

export type IncomingHandler<M extends keyof IncomingCalls> = (
  params: IncomingCalls[M]['req'],
) => Promise<IncomingCalls[M]['conf'] | typeof NO_REPLY>;

export function handleCall<M extends keyof IncomingCalls>(
  client: RpcClient,
  method: M,
  handler: IncomingHandler<M>,
): void {
  client.handle(method, async ({ params }) => {
    // Strict mode has already validated params against the request schema.
    const result = await handler(params as IncomingCalls[M]['req']);
    return result as Record<string, unknown>;
  });
}

export async function callCentralSystem<M extends keyof OutgoingCalls>(
  client: RpcClient,
  method: M,
  params: OutgoingCalls[M]['req'],
  session: AbortSignal,
): Promise<OutgoingCalls[M]['conf']> {
  if (session.aborted) throw new Error(`${method} not sent: charge point disconnected`);
  // ocpp-rpc leaves an 'abort' listener on the signal it is given for good, so a long-lived
  // session signal would collect one per call; a per-call signal is collected with the call.
  const call = new AbortController();
  const abortCall = (): void => call.abort();
  session.addEventListener('abort', abortCall, { once: true });
  try {
    // Strict mode has validated the confirmation against the schema before it resolves.
    const conf = await client.call(method, params, { signal: call.signal });
    return conf as OutgoingCalls[M]['conf'];
  } finally {
    session.removeEventListener('abort', abortCall);
  }
}

/** True when the central system answered with a CALLERROR (retrying would not help). */
export function isRpcErrorResponse(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'rpcErrorCode' in error;
}
