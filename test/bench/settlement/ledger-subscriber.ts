import mqtt, { type MqttClient } from 'mqtt';

/** The fleet cloud's view: a subscriber to the uplink's ledger topic, timing each credit's arrival. */
export class Subscriber {
  private readonly waiting = new Map<string, (at: bigint) => void>();
  private readonly early = new Map<string, bigint>();
  private readonly refs = new Map<number, (at: bigint) => void>();
  private constructor(
    private readonly client: MqttClient,
    private readonly prefix: string,
    readonly gatewayOnline: Promise<void>,
  ) {}

  /** `prefix`: the gateway's uplink.topicPrefix; `${prefix}ref` carries the bare round trips. */
  static async start(url: string, prefix: string): Promise<Subscriber> {
    const client = await mqtt.connectAsync(url, { clean: true, reconnectPeriod: 0 });
    let online: () => void = () => undefined;
    const s = new Subscriber(client, prefix, new Promise<void>((r) => (online = r)));
    client.on('message', (topic, payload) => {
      const at = process.hrtime.bigint();
      if (topic === `${prefix}ref`) {
        s.refs.get(payload.readUInt32BE(0))?.(at);
        return;
      }
      const body = JSON.parse(payload.toString()) as {
        online?: boolean;
        entry?: { kind: string; sessionId: string | null };
      };
      if (topic === `${prefix}gateway` && body.online) online();
      if (topic !== `${prefix}ledger` || body.entry?.kind !== 'session_credit') return;
      const id = body.entry.sessionId as string;
      const waiter = s.waiting.get(id);
      if (waiter) waiter(at);
      else s.early.set(id, at);
    });
    await client.subscribeAsync([`${prefix}ledger`, `${prefix}gateway`, `${prefix}ref`], {
      qos: 1,
    });
    return s;
  }

  /** When the credit of this session arrives (or arrived). */
  credit(sessionId: string): Promise<bigint> {
    const early = this.early.get(sessionId);
    if (early !== undefined) return Promise.resolve(early);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`credit of ${sessionId} never published`)),
        30_000,
      );
      this.waiting.set(sessionId, (at) => {
        clearTimeout(timer);
        this.waiting.delete(sessionId);
        resolve(at);
      });
    });
  }

  /** Bare QoS 1 publish→receive through the same broker, from a second client, one at a time. */
  async roundTrips(url: string, count: number, warmUp: number): Promise<number[]> {
    const pub = await mqtt.connectAsync(url, { clean: true, reconnectPeriod: 0 });
    try {
      const samples: number[] = [];
      // About the size of a ledger entry payload as the uplink publishes it.
      const payload = Buffer.alloc(360, 0x61);
      for (let i = 0; i < count + warmUp; i++) {
        payload.writeUInt32BE(i, 0);
        const received = new Promise<bigint>((r) => this.refs.set(i, r));
        const t0 = process.hrtime.bigint();
        pub.publish(`${this.prefix}ref`, payload, { qos: 1 });
        const at = await received;
        this.refs.delete(i);
        if (i >= warmUp) samples.push(Number(at - t0) / 1e6);
      }
      return samples;
    } finally {
      await pub.endAsync();
    }
  }

  async close(): Promise<void> {
    await this.client.endAsync(true);
  }
}
