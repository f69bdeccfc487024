import ocppRpc from 'ocpp-rpc';
import { ocpp21Validator } from './ocpp21-validator.js';

// ocpp-rpc is CommonJS; named ESM imports of some of its exports fail at runtime.
const { RPCClient } = ocppRpc;

export type RpcClient = InstanceType<typeof RPCClient>;
type RpcClientOptions = ConstructorParameters<typeof RPCClient>[0];

/** The subprotocols whose schemas ocpp-rpc enforces reliably in strict mode. */
export type OcppProtocol = 'ocpp1.6' | 'ocpp2.0.1' | 'ocpp2.1';

/**
 * Request and response shapes keyed by action. Written as a self-referencing constraint so that
 * plain interfaces (which have no index signature) qualify.
 */
export type CallMap<T> = { [M in keyof T]: { req: object; conf: object } };

/** Returned by a handler to leave a call unanswered (the central system then times out). */
// The .d.ts declares NOREPLY as an object, but at runtime the package exports the bare symbol.
export const NO_REPLY = ocppRpc.NOREPLY as unknown as symbol;

/** TLS for wss:// (security profiles 2 and 3): PEM contents, not paths. */
export interface ClientTls {
  /** CA that signed the central system's certificate (else the system's trust store). */
  ca?: string | Buffer;
  /** Client certificate and key (profile 3). */
  cert?: string | Buffer;
  key?: string | Buffer;
}

export interface RpcClientSettings {
  protocol: OcppProtocol;
  endpoint: string;
  identity: string;
  password?: string;
  tls?: ClientTls;
  reconnect: boolean;
  callTimeoutMs: number;
  /** Validate frames both ways against the schemas (false for firmware that bends them). */
  strict: boolean;
}

export function createRpcClient(settings: RpcClientSettings): RpcClient {
  const options: Partial<RpcClientOptions> = {
    endpoint: settings.endpoint,
    identity: settings.identity,
    protocols: [settings.protocol],
    // Strict mode validates both directions, so a schema-invalid message is a simulator bug
    // that surfaces as a rejected call instead of confusing the central system.
    strictMode: settings.strict,
    ...(settings.protocol === 'ocpp2.1' ? { strictModeValidators: [ocpp21Validator()] } : {}),
    password: settings.password ?? null,
    reconnect: settings.reconnect,
    callTimeoutMs: settings.callTimeoutMs,
    // ws options: used by the TLS handshake of a wss:// endpoint.
    wsOpts: settings.tls ? { ...settings.tls } : {},
  };
  // The constructor type lists every option as required although the library fills in defaults.
  return new RPCClient(options as RpcClientOptions);
}

export type IncomingHandler<In extends CallMap<In>, M extends keyof In> = (
  params: In[M]['req'],
) => Promise<In[M]['conf'] | typeof NO_REPLY>;

/** A typed `client.handle` for the calls of one protocol version. */
export function handlerRegistrar<In extends CallMap<In>>(
  client: RpcClient,
  reshape: (method: string, result: unknown) => unknown = (_method, result) => result,
) {
  return <M extends keyof In & string>(method: M, handler: IncomingHandler<In, M>): void => {
    client.handle(method, async ({ params }) => {
      // The central system's frames are schema-valid (strict mode checks them where enabled).
      const result = await handler(params as In[M]['req']);
      return (result === NO_REPLY ? result : reshape(method, result)) as Record<string, unknown>;
    });
  };
}

export async function callCentralSystem<Out extends CallMap<Out>, M extends keyof Out & string>(
  client: RpcClient,
  method: M,
  params: Out[M]['req'],
  session: AbortSignal,
): Promise<Out[M]['conf']> {
  if (session.aborted) throw new Error(`${method} not sent: charge point disconnected`);
  // ocpp-rpc leaves an 'abort' listener on the signal it is given for good, so a long-lived
  // session signal would collect one per call; a per-call signal is collected with the call.
  const call = new AbortController();
  const abortCall = (): void => call.abort();
  session.addEventListener('abort', abortCall, { once: true });
  try {
    // Strict mode has validated the confirmation against the schema before it resolves.
    const conf: unknown = await client.call(method, params, { signal: call.signal });
    return conf as Out[M]['conf'];
  } finally {
    session.removeEventListener('abort', abortCall);
  }
}

/** True when the central system answered with a CALLERROR (retrying would not help). */
export function isRpcErrorResponse(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'rpcErrorCode' in error;
}
