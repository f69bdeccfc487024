import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import { outboxHealthOf, type OutboxThresholds } from '../store/storage-health.js';
import type { OutboxQueue } from './outbox-queue.js';

export interface OutboxMonitorOptions {
  queue: OutboxQueue;
  clock: Clock;
  log: Logger;
  sentRetentionMs: number;
  warnDepth: number;
  /** The other alarm thresholds (uplink.outbox); left out, they never fire. */
  errorDepth?: number;
  warnAgeMs?: number;
  errorAgeMs?: number;
  intervalMs: number;
}

/** Sent rows deleted per check: one short statement even after a long backlog was published. */
const PRUNE_BATCH = 5_000;

/**
 * Keeps the outbox bounded the only safe way: rows the broker acknowledged are deleted after
 * their retention; unsent rows are never dropped (each is money or a session the cloud must
 * learn of), so while the backlog is above a threshold (depth or age of its oldest row) the log
 * warns, or errs past the error thresholds, on every check until it drains.
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

  thresholds(): OutboxThresholds {
    return {
      warnDepth: this.o.warnDepth,
      errorDepth: this.o.errorDepth ?? Infinity,
      warnAgeMs: this.o.warnAgeMs ?? Infinity,
      errorAgeMs: this.o.errorAgeMs ?? Infinity,
    };
  }

  check(): void {
    try {
      const before = new Date(this.o.clock.now() - this.o.sentRetentionMs).toISOString();
      const pruned = this.o.queue.pruneSent(before, PRUNE_BATCH);
      if (pruned > 0) this.o.log.info({ pruned }, 'outbox: sent rows past retention deleted');
      const { depth, oldestUnsentAt } = this.o.queue.depth();
      const health = outboxHealthOf(depth, oldestUnsentAt, this.o.clock.now(), this.thresholds());
      const detail = { outboxDepth: depth, oldestUnsentAt, alarm: health.reasons };
      if (health.level === 'error') {
        this.o.log.error(
          detail,
          'outbox backlog above uplink.outbox.errorDepth/errorAgeMinutes: the cloud is far behind and the disk fills',
        );
      } else if (health.level === 'warn') {
        this.o.log.warn(
          detail,
          'outbox backlog above uplink.outbox.warnDepth/warnAgeMinutes: nothing is dropped, the disk fills',
        );
      }
    } catch (err) {
      this.o.log.error({ err: (err as Error).message }, 'outbox check failed');
    }
  }
}
