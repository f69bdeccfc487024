import { callCentralSystem, createRpcClient } from './rpc-client.js';
import type { CallMap, RpcClient, RpcClientSettings } from './rpc-client.js';

export interface LinkListener {
  frame(direction: 'in' | 'out', message: string): void;
  /** The socket dropped unexpectedly; ocpp-rpc reconnects if configured to. */
  dropped(code: number | undefined, reason: string | undefined): void;
  /** The socket (re)opened. */
  opened(): void;
  /** The socket closed and will not come back (reconnect off or given up). */
  lost(code: number | undefined): void;
  registerHandlers(client: RpcClient): void;
  /** What the charger's firmware makes of a request before it goes on the wire. */
  reshape(method: string, params: object): object;
}

/**
 * The websocket to the central system. Tells intentional closes apart from drops, and cancels
 * every in-flight call when the charge point is switched off, so no call timer outlives it.
 */
export class CentralSystemLink<Out extends CallMap<Out>> {
  private client?: RpcClient;
  private socketOpen = false;
  private calls = new AbortController();
  private closing = false;
  // A failed connect() also emits 'close'; only a socket that was open can be "lost".
  private wasOpen = false;

  constructor(
    private settings: RpcClientSettings,
    private readonly listener: LinkListener,
  ) {}

  async open(): Promise<void> {
    if (this.calls.signal.aborted) this.calls = new AbortController();
    this.client ??= this.createClient();
    this.closing = false;
    this.wasOpen = false;
    await this.client.connect();
  }

  /** Closes the socket; pending calls are rejected by ocpp-rpc. */
  async close(): Promise<void> {
    if (!this.client) return;
    this.closing = true;
    await this.client.close({ code: 1000 });
  }

  /** Rejects every call in flight or queued, now and until the next open(). */
  abortCalls(): void {
    this.calls.abort();
  }

  /** The basic-auth password of every connection from the next one on. */
  setPassword(password: string): void {
    this.settings = { ...this.settings, password };
    // ocpp-rpc merges what it is given into its options, whatever its typings ask for.
    this.client?.reconfigure({ password } as Parameters<RpcClient['reconfigure']>[0]);
  }

  /** The socket is up now (false while ocpp-rpc reconnects). */
  get isOpen(): boolean {
    return this.socketOpen;
  }

  call<M extends keyof Out & string>(method: M, params: Out[M]['req']): Promise<Out[M]['conf']> {
    if (!this.client) return Promise.reject(new Error(`${method} not sent: never connected`));
    const wire = this.listener.reshape(method, params) as Out[M]['req'];
    return callCentralSystem<Out, M>(this.client, method, wire, this.calls.signal);
  }

  private createClient(): RpcClient {
    const client = createRpcClient(this.settings);
    client.on('message', ({ message, outbound }: { message: unknown; outbound: boolean }) => {
      this.listener.frame(outbound ? 'out' : 'in', String(message));
    });
    client.on('disconnect', ({ code, reason }: { code?: number; reason?: string }) => {
      this.socketOpen = false;
      if (!this.closing) this.listener.dropped(code, reason);
    });
    client.on('open', () => {
      this.wasOpen = true;
      this.socketOpen = true;
      if (!this.closing) this.listener.opened();
    });
    client.on('close', ({ code }: { code?: number }) => {
      if (!this.closing && this.wasOpen) this.listener.lost(code);
    });
    this.listener.registerHandlers(client);
    return client;
  }
}
