import type { MqttClient } from 'mqtt';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import type { OutboxQueue, OutboxRow } from './outbox-queue.js';
import type { Topics } from './topics.js';

export interface OutboxPublisherOptions {
  queue: OutboxQueue;
  topics: Topics;
  client: MqttClient;
  clock: Clock;
  log: Logger;
  /** Most rows handed to the client and not yet acknowledged. */
  window: number;
}

/**
 * Publishes the outbox in seq order with QoS 1 and marks a row sent only when the broker's PUBACK
 * arrives. Rows are handed to the client only while it is connected; a row handed over is the
 * client's to deliver (it resends unacknowledged QoS 1 messages after a reconnect), so the cursor
 * only moves forward, except after a failed delivery, when it starts again from the first unsent
 * row. After a crash the next process starts from the first unsent row: at least once, in order.
 * Each payload gets its outbox `seq`, so the cloud can order and de-duplicate (`id`).
 */
export class OutboxPublisher {
  private cursor = 0;
  private inflight = 0;
  private resync = false;
  private scheduled = false;
  private stopped = false;
  private acked: number[] = [];
  private ackFlush = false;
  private publishedTotal = 0;

  constructor(private readonly o: OutboxPublisherOptions) {}

  get published(): number {
    return this.publishedTotal;
  }

  /** Something may be waiting: drain soon (after the current transaction has committed). */
  kick(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.drain();
    });
  }

  stop(): void {
    this.stopped = true;
    this.flushAcks();
  }

  private drain(): void {
    if (this.stopped || !this.o.client.connected) return;
    if (this.resync && this.inflight === 0) {
      this.cursor = 0;
      this.resync = false;
    }
    while (this.inflight < this.o.window) {
      const rows = this.o.queue.next(this.cursor, this.o.window - this.inflight);
      if (rows.length === 0) return;
      for (const row of rows) {
        this.send(row);
        this.cursor = row.seq;
      }
    }
  }

  private send(row: OutboxRow): void {
    this.inflight++;
    const body = JSON.stringify({ ...(JSON.parse(row.payload) as object), seq: row.seq });
    this.o.client.publish(this.o.topics.outbox(row.topic), body, { qos: 1 }, (err) => {
      this.inflight--;
      if (err) {
        if (!this.stopped)
          this.o.log.warn({ seq: row.seq, err: err.message }, 'outbox publish failed: will resend');
        this.resync = true;
      } else {
        this.publishedTotal++;
        this.acked.push(row.seq);
        this.scheduleAckFlush();
      }
      this.kick();
    });
  }

  private scheduleAckFlush(): void {
    if (this.ackFlush) return;
    this.ackFlush = true;
    setImmediate(() => this.flushAcks());
  }

  private flushAcks(): void {
    this.ackFlush = false;
    if (this.acked.length === 0) return;
    const seqs = this.acked;
    this.acked = [];
    try {
      this.o.queue.markSent(seqs, new Date(this.o.clock.now()).toISOString());
    } catch (err) {
      // Not marked means published again later: a duplicate, never a loss.
      this.o.log.error({ err: (err as Error).message }, 'could not mark outbox rows sent');
    }
  }
}
