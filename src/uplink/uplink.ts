import mqtt, { type MqttClient } from 'mqtt';
import type { ConnectorView } from '../ocpp/port.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import type { Outbox } from '../store/outbox.js';
import type { CommandProcessor } from './command-processor.js';
import { mqttOptions } from './mqtt-options.js';
import { OutboxPublisher } from './outbox-publisher.js';
import type { OutboxQueue } from './outbox-queue.js';
import type { UplinkSettings } from './settings.js';
import { StatusPublisher } from './status-publisher.js';
import { Topics } from './topics.js';

export interface UplinkOptions {
  settings: UplinkSettings;
  siteId: string;
  clock: Clock;
  log: Logger;
  outbox: Outbox;
  queue: OutboxQueue;
  commands: CommandProcessor;
  /** Other topics the gateway listens to on the same connection (the power limit feed). */
  feeds?: readonly TopicFeed[];
}

/** A topic read on the uplink's connection; its handler validates what arrives. */
export interface TopicFeed {
  topic: string;
  handle(payload: Buffer, retained: boolean): void;
}

export interface UplinkHealth {
  enabled: boolean;
  connected: boolean;
  outboxDepth: number;
  oldestUnsentAt: string | null;
  published: number;
}

/** How long to wait for the new rows after a "something was enqueued" before looking anyway. */
const POLL_MS = 1000;
/** Rows handed to the MQTT client and not yet acknowledged, at most. */
const WINDOW = 64;

/**
 * The MQTT connection to the fleet's cloud: a persistent session (fixed client id, clean session
 * off, QoS 1 subscription to `<prefix>commands`), the outbox publisher, retained status and the
 * gateway's presence (retained, with a last will).
 */
export class Uplink {
  private readonly client: MqttClient;
  private readonly topics: Topics;
  private readonly publisher: OutboxPublisher;
  private readonly status: StatusPublisher;
  private poll: NodeJS.Timeout | null = null;
  private everConnected = false;

  constructor(private readonly o: UplinkOptions) {
    this.topics = new Topics(o.settings.topicPrefix);
    const will = JSON.stringify({ type: 'gateway_state', siteId: o.siteId, online: false });
    this.client = mqtt.connect(o.settings.url, {
      ...mqttOptions(o.settings, { topic: this.topics.gateway, payload: will }),
      manualConnect: true,
    });
    // Commands are applied before the client acknowledges them (PUBACK after this callback): a
    // command the gateway dies while applying is delivered again and then found in the table.
    this.client.handleMessage = (packet, done) => {
      const feed = o.feeds?.find((f) => f.topic === packet.topic);
      if (feed) {
        feed.handle(Buffer.from(packet.payload), packet.retain);
        return done();
      }
      if (packet.topic !== this.topics.commands) return done();
      try {
        const reply = o.commands.handle(Buffer.from(packet.payload));
        o.log.info(
          { commandId: reply.commandId, commandType: reply.commandType, status: reply.status },
          'uplink command',
        );
        done();
      } catch (err) {
        // A database failure: no PUBACK, the broker delivers the command again.
        o.log.error({ err: (err as Error).message }, 'uplink command failed: not acknowledged');
        done(err as Error);
      }
    };
    this.publisher = new OutboxPublisher({
      queue: o.queue,
      topics: this.topics,
      client: this.client,
      clock: o.clock,
      log: o.log,
      window: WINDOW,
    });
    this.status = new StatusPublisher(this.client, this.topics);
    this.client.on('connect', (connack) => this.onConnect(connack.sessionPresent));
    this.client.on('close', () => {
      if (this.everConnected) this.log('uplink disconnected, outbox keeps queueing', 'warn');
    });
    this.client.on('error', (err) => o.log.warn({ err: err.message }, 'uplink error'));
  }

  start(): void {
    this.o.outbox.onEnqueue(() => this.publisher.kick());
    this.o.queue.onDurable(() => this.publisher.kick());
    this.client.connect();
    this.poll = setInterval(() => this.publisher.kick(), POLL_MS);
    this.poll.unref();
    this.o.log.info(
      {
        url: this.o.settings.url,
        clientId: this.o.settings.clientId,
        topicPrefix: this.topics.prefix,
      },
      'uplink connecting',
    );
  }

  connectorChanged(view: ConnectorView): void {
    try {
      this.status.changed(view, new Date(this.o.clock.now()).toISOString());
    } catch (err) {
      this.o.log.warn({ err: (err as Error).message }, 'status not published');
    }
  }

  health(): UplinkHealth {
    const { depth, oldestUnsentAt } = this.o.queue.depth();
    return {
      enabled: true,
      connected: this.client.connected,
      outboxDepth: depth,
      oldestUnsentAt,
      published: this.publisher.published,
    };
  }

  async close(): Promise<void> {
    if (this.poll) clearInterval(this.poll);
    this.publisher.stop();
    if (this.client.connected) {
      const offline = JSON.stringify({
        type: 'gateway_state',
        siteId: this.o.siteId,
        online: false,
        at: new Date(this.o.clock.now()).toISOString(),
      });
      await new Promise<void>((resolve) => {
        this.client.publish(this.topics.gateway, offline, { qos: 1, retain: true }, () =>
          resolve(),
        );
        setTimeout(resolve, 1000).unref();
      });
    }
    await this.client.endAsync(true);
  }

  private onConnect(sessionPresent: boolean): void {
    this.everConnected = true;
    this.log('uplink connected', 'info', { sessionPresent });
    if (!sessionPresent) {
      // A new session (first start, or the broker lost it): subscribe; QoS 1 so commands queue.
      this.client.subscribe(this.topics.commands, { qos: 1 }, (err) => {
        if (err) this.o.log.error({ err: err.message }, 'uplink subscribe failed');
      });
    }
    // Feeds are live values: QoS 0, so the broker queues none while the gateway is away (a
    // value from then would look fresh), and again on every connect (topic may have changed).
    for (const feed of this.o.feeds ?? []) {
      this.client.subscribe(feed.topic, { qos: 0 }, (err) => {
        if (err) this.o.log.error({ err: err.message, topic: feed.topic }, 'feed subscribe failed');
      });
    }
    const online = JSON.stringify({
      type: 'gateway_state',
      siteId: this.o.siteId,
      online: true,
      at: new Date(this.o.clock.now()).toISOString(),
    });
    this.client.publish(this.topics.gateway, online, { qos: 1, retain: true });
    this.status.flush();
    this.publisher.kick();
  }

  private log(msg: string, level: 'info' | 'warn', extra: Record<string, unknown> = {}): void {
    const { depth, oldestUnsentAt } = this.o.queue.depth();
    this.o.log[level]({ ...extra, outboxDepth: depth, oldestUnsentAt }, msg);
  }
}
