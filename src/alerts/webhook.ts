import type { Statement } from 'better-sqlite3';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import type { Db } from '../store/database.js';
import { EVENT_ID_HEADER, signature, SIGNATURE_HEADER, TIMESTAMP_HEADER } from './signature.js';

export interface WebhookOptions {
  db: Db;
  clock: Clock;
  log: Logger;
  url: string;
  secret: string;
  timeoutMs: number;
  retryMs: number;
  maxRetryMs: number;
  giveUpMs: number;
}

interface Due {
  eventId: string;
  body: string;
  createdAt: string;
  attempts: number;
}

/**
 * Sends the alert_deliveries queue to the webhook, oldest first, one request at a time: a 2xx
 * marks the row delivered; anything else (an error status, a timeout, no connection) waits
 * retryMs, doubling per attempt up to maxRetryMs, and the queue waits with it, so events arrive
 * in order. Rows live in SQLite, so a restart resumes where it stopped: at least once, each event
 * with its stable id for the receiver to drop a repeat. An event undelivered after giveUpMs is
 * given up, and the log says so.
 */
export class WebhookSender {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private again = false;
  private stopped = false;
  private readonly closing = new AbortController();
  private readonly dueStmt: Statement<[string], Due>;
  private readonly nextStmt: Statement<[], { at: string | null }>;
  private readonly deliveredStmt: Statement<[number, string, string]>;
  private readonly failedStmt: Statement<[number, string, string, string]>;
  private readonly givenUpStmt: Statement<[string, string, string]>;

  constructor(private readonly o: WebhookOptions) {
    const open = 'delivered_at IS NULL AND given_up_at IS NULL';
    this.dueStmt = o.db.prepare(
      `SELECT event_id AS eventId, body, created_at AS createdAt, attempts
       FROM alert_deliveries WHERE ${open} AND next_attempt_at <= ?
       ORDER BY created_at, event_id LIMIT 1`,
    );
    this.nextStmt = o.db.prepare(
      `SELECT min(next_attempt_at) AS at FROM alert_deliveries WHERE ${open}`,
    );
    this.deliveredStmt = o.db.prepare(
      'UPDATE alert_deliveries SET attempts = ?, delivered_at = ? WHERE event_id = ?',
    );
    this.failedStmt = o.db.prepare(
      `UPDATE alert_deliveries SET attempts = ?, next_attempt_at = ?, last_error = ?
       WHERE event_id = ?`,
    );
    this.givenUpStmt = o.db.prepare(
      'UPDATE alert_deliveries SET given_up_at = ?, last_error = ? WHERE event_id = ?',
    );
  }

  start(): void {
    this.kick();
  }

  stop(): void {
    this.stopped = true;
    this.closing.abort();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** An event may be waiting: send soon (after the writing transaction has committed). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.run(), 0);
    this.timer.unref();
  }

  private async run(): Promise<void> {
    this.timer = null;
    this.running = true;
    try {
      for (;;) {
        this.again = false;
        const now = this.o.clock.now();
        const due = this.dueStmt.get(new Date(now).toISOString());
        if (!due || this.stopped) break;
        if (now - Date.parse(due.createdAt) >= this.o.giveUpMs) {
          this.givenUpStmt.run(new Date(now).toISOString(), 'given up', due.eventId);
          this.o.log.error(
            { eventId: due.eventId, attempts: due.attempts },
            'alert webhook: event given up (alerts.webhook.giveUpHours)',
          );
          continue;
        }
        const error = await this.post(due.body, due.eventId);
        if (this.stopped) break;
        const attempts = due.attempts + 1;
        const at = this.o.clock.now();
        if (error === null) {
          this.deliveredStmt.run(attempts, new Date(at).toISOString(), due.eventId);
          continue;
        }
        const waitMs = Math.min(this.o.maxRetryMs, this.o.retryMs * 2 ** (attempts - 1));
        const next = new Date(at + waitMs).toISOString();
        this.failedStmt.run(attempts, next, error, due.eventId);
        this.o.log.warn(
          { eventId: due.eventId, attempts, error, retryInMs: waitMs },
          'alert webhook: delivery failed, will retry',
        );
        break;
      }
    } catch (err) {
      this.o.log.error({ err: (err as Error).message }, 'alert webhook: queue read failed');
    } finally {
      this.running = false;
    }
    if (this.again) this.kick();
    else this.wakeAtNext();
  }

  private wakeAtNext(): void {
    if (this.stopped) return;
    const next = this.nextStmt.get()?.at;
    if (!next) return;
    const waitMs = Math.max(0, Date.parse(next) - this.o.clock.now());
    // Past the longest retry wait a timer is re-armed anyway (a clock moved by a test, NTP).
    this.timer = setTimeout(() => void this.run(), Math.min(waitMs, this.o.maxRetryMs));
    this.timer.unref();
  }

  /** null when the receiver answered 2xx; otherwise what went wrong, in words. */
  private async post(body: string, eventId: string): Promise<string | null> {
    const timestamp = String(Math.floor(this.o.clock.now() / 1000));
    try {
      const res = await fetch(this.o.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [EVENT_ID_HEADER]: eventId,
          [TIMESTAMP_HEADER]: timestamp,
          [SIGNATURE_HEADER]: signature(this.o.secret, timestamp, body),
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.any([AbortSignal.timeout(this.o.timeoutMs), this.closing.signal]),
      });
      await res.body?.cancel();
      return res.status >= 200 && res.status < 300 ? null : `HTTP ${res.status}`;
    } catch (err) {
      const e = err as Error;
      return e.name === 'TimeoutError' ? 'timed out' : e.message;
    }
  }
}
