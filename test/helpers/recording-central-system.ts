import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import ocppRpc from 'ocpp-rpc';

const { RPCServer } = ocppRpc;
type RpcServer = InstanceType<typeof RPCServer>;
type RpcPeer = InstanceType<typeof ocppRpc.RPCClient>;

/** An OCPP call table: each method's request and confirmation types (interfaces need no index). */
export type CallTable<T> = { [M in keyof T]: { req: unknown; conf: unknown } };

export interface Received<Out extends CallTable<Out>, M extends keyof Out = keyof Out> {
  identity: string;
  method: M;
  params: Out[M]['req'];
}

/** Registers the answer to one method; a symbol (ocpp-rpc's NOREPLY) leaves the call unanswered. */
export type Answer<Out extends CallTable<Out>> = <M extends keyof Out & string>(
  method: M,
  reply: (params: Out[M]['req']) => Out[M]['conf'] | symbol,
) => void;

/**
 * A bare strict-mode central system on 127.0.0.1 for simulator tests: it answers what a charger
 * sends (each protocol's subclass says how) and records every call, so a test can wait for one.
 * `Out` is what chargers send, `In` what the central system may call on them.
 */
export abstract class RecordingCentralSystem<Out extends CallTable<Out>, In extends CallTable<In>> {
  readonly received: Received<Out>[] = [];
  readonly validationFailures: unknown[] = [];
  readonly bootReplies: ('Accepted' | 'Pending')[] = [];
  heartbeatInterval = 300;
  url = '';
  private server: RpcServer | null = null;
  private readonly peers = new Map<string, RpcPeer>();
  private readonly arrivals = new EventEmitter();

  constructor(
    private readonly protocol: string,
    private readonly password: string,
    /** Validators beside ocpp-rpc's own (its 2.1 schemas need ocpp21Validator's ids). */
    private readonly strictModeValidators: ReturnType<typeof ocppRpc.createValidator>[] = [],
  ) {}

  /** What the central system answers to each call, registered per connecting charger. */
  protected abstract answers(answer: Answer<Out>): void;

  async listen(): Promise<this> {
    const server = new RPCServer({
      protocols: [this.protocol],
      strictMode: true,
      strictModeValidators: this.strictModeValidators,
    });
    server.auth((accept, reject, handshake) => {
      if (handshake.password?.toString('utf8') === this.password) accept();
      else reject(401, 'Unauthorized');
    });
    const http = await server.listen(0, '127.0.0.1');
    this.url = `ws://127.0.0.1:${(http.address() as AddressInfo).port}/ocpp`;
    server.on('client', (peer: RpcPeer) => this.attach(peer));
    this.server = server;
    return this;
  }

  /** The BootNotification confirmation both versions share: queued replies, then Accepted. */
  protected bootConf(): { status: 'Accepted' | 'Pending'; currentTime: string; interval: number } {
    return {
      status: this.bootReplies.shift() ?? 'Accepted',
      currentTime: new Date().toISOString(),
      interval: this.heartbeatInterval,
    };
  }

  messages<M extends keyof Out>(method: M): Out[M]['req'][] {
    return this.received
      .filter((message): message is Received<Out, M> => message.method === method)
      .map((message) => message.params);
  }

  /** The first matching message received at or after index `from` (past or future). */
  waitForMessage<M extends keyof Out>(
    method: M,
    predicate: (params: Out[M]['req']) => boolean = () => true,
    timeoutMs = 5_000,
    from = 0,
  ): Promise<Out[M]['req']> {
    const past = this.received
      .slice(from)
      .filter((message): message is Received<Out, M> => message.method === method)
      .map((message) => message.params)
      .find(predicate);
    if (past) return Promise.resolve(past);
    return new Promise((resolve, reject) => {
      const onMessage = (message: Received<Out>): void => {
        if (message.method !== method) return;
        const params = message.params as Out[M]['req'];
        if (!predicate(params)) return;
        clearTimeout(timer);
        this.arrivals.off('message', onMessage);
        resolve(params);
      };
      const timer = setTimeout(() => {
        this.arrivals.off('message', onMessage);
        reject(new Error(`no matching ${String(method)} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.arrivals.on('message', onMessage);
    });
  }

  async call<M extends keyof In & string>(
    identity: string,
    method: M,
    params: In[M]['req'],
    callTimeoutMs = 5_000,
  ): Promise<In[M]['conf']> {
    const peer = this.peers.get(identity);
    if (!peer) throw new Error(`${identity} is not connected`);
    return (await peer.call(method, params, { callTimeoutMs })) as In[M]['conf'];
  }

  /** Drops the socket from the server side, as a central system restart would. */
  async drop(identity: string): Promise<void> {
    await this.peers.get(identity)?.close({ code: 1012, reason: 'restart' });
  }

  async close(): Promise<void> {
    await this.server?.close({ force: true });
  }

  private attach(peer: RpcPeer): void {
    const identity = peer.identity ?? '';
    this.peers.set(identity, peer);
    peer.on('strictValidationFailure', (failure: unknown) => this.validationFailures.push(failure));
    this.answers((method, reply) => {
      peer.handle(method, async ({ params }) => {
        const typed = params as Out[typeof method]['req'];
        const conf = reply(typed);
        this.record({ identity, method, params: typed });
        return conf as Record<string, unknown>;
      });
    });
  }

  private record(message: Received<Out>): void {
    this.received.push(message);
    this.arrivals.emit('message', message);
  }
}
