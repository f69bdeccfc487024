import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import type { OutboxQueue } from './outbox-queue.js';

export interface OutboxMonitorOptions {
  queue: OutboxQueue;
  clock: Clock;
  log: Logger;
  sentRetentionMs: number;
  warnDepth: number;
  intervalMs: number;
}

/**
 * Keeps the outbox bounded the only safe way: rows the broker acknowledged are deleted after
 * their retention; unsent rows are never dropped (each is money or a session the cloud must
 * learn of), so above `warnDepth` the log warns on every check until the backlog drains.
 */
export class OutboxMonitor {
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly o: OutboxMonitorOptions) {}

  start(): void {
    this.check();
    this.timer = setInterval(() => this.check(), this.o.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  check(): void {
    try {
      const before = new Date(this.o.clock.now() - this.o.sentRetentionMs).toISOString();
      const pruned = this.o.queue.pruneSent(before);
      if (pruned > 0) this.o.log.info({ pruned }, 'outbox: sent rows past retention deleted');
      const { depth, oldestUnsentAt } = this.o.queue.depth();
      if (depth > this.o.warnDepth) {
        this.o.log.warn(
          { outboxDepth: depth, oldestUnsentAt, warnDepth: this.o.warnDepth },
          'outbox backlog above uplink.outbox.warnDepth: nothing is dropped, the disk fills',
        );
      }
    } catch (err) {
      this.o.log.error({ err: (err as Error).message }, 'outbox check failed');
    }
  }
}
