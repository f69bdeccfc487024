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

interface Head {
  eventId: string;
  body: string;
  createdAt: string;
  attempts: number;
  nextAttemptAt: string;
}

/**
 * Answers that refuse this event as it is, not the receiver being unwell: the same body would be
 * refused again, so the event is given up at once rather than holding every later one behind it
 * until giveUpMs. Anything else (400 and 401 included: a receiver refusing the signature, often a
 * secret to fix on one side) is retried.
 */
const REFUSED_FOR_GOOD: ReadonlySet<number> = new Set([413, 415, 422]);

type Outcome = { delivered: true } | { delivered: false; error: string; refused: boolean };

/**
 * Sends the alert_deliveries queue to the webhook in the order its rows were written, one request
 * at a time, head of line: only the oldest event neither delivered nor given up is ever sent. A
 * 2xx marks it delivered and the next one goes; anything else (an error status, a timeout, no
 * connection) waits retryMs, doubling per attempt up to maxRetryMs, and every later event waits
 * behind it, so a receiver never sees an event before an older one. Rows live in SQLite, so a
 * restart resumes where it stopped: at least once, each event with its stable id for the
 * receiver to drop a repeat. An event the receiver refuses for good (REFUSED_FOR_GOOD), or still
 * undelivered giveUpMs after it was written, is given up, and the log says so.
 */
export class WebhookSender {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private again = false;
  private stopped = false;
  private readonly closing = new AbortController();
  private readonly headStmt: Statement<[], Head>;
  private readonly deliveredStmt: Statement<[number, string, string]>;
  private readonly failedStmt: Statement<[number, string, string, string]>;
  private readonly givenUpStmt: Statement<[number, string, string, string]>;

  constructor(private readonly o: WebhookOptions) {
    // rowid order is the order the rows were written (a deleted row's rowid is never below a
    // live one's); the partial index holds only the queue, so finding its head reads only it.
    this.headStmt = o.db.prepare(
      `SELECT event_id AS eventId, body, created_at AS createdAt, attempts,
         next_attempt_at AS nextAttemptAt
       FROM alert_deliveries INDEXED BY alert_deliveries_due
       WHERE delivered_at IS NULL AND given_up_at IS NULL ORDER BY rowid LIMIT 1`,
    );
    this.deliveredStmt = o.db.prepare(
      'UPDATE alert_deliveries SET attempts = ?, delivered_at = ? WHERE event_id = ?',
    );
    this.failedStmt = o.db.prepare(
      `UPDATE alert_deliveries SET attempts = ?, next_attempt_at = ?, last_error = ?
       WHERE event_id = ?`,
    );
    this.givenUpStmt = o.db.prepare(
      `UPDATE alert_deliveries SET attempts = ?, given_up_at = ?, last_error = ?
       WHERE event_id = ?`,
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
    let waitFor: string | null = null;
    try {
      for (;;) {
        this.again = false;
        const head = this.headStmt.get();
        if (!head || this.stopped) break;
        const now = this.o.clock.now();
        if (Date.parse(head.nextAttemptAt) > now) {
          waitFor = head.nextAttemptAt;
          break;
        }
        if (now - Date.parse(head.createdAt) >= this.o.giveUpMs) {
          const message = 'alert webhook: event given up (alerts.webhook.giveUpHours)';
          this.giveUp(head, head.attempts, 'given up', message);
          continue;
        }
        const outcome = await this.post(head.body, head.eventId);
        if (this.stopped) break;
        const attempts = head.attempts + 1;
        const at = this.o.clock.now();
        if (outcome.delivered) {
          this.deliveredStmt.run(attempts, new Date(at).toISOString(), head.eventId);
          continue;
        }
        if (outcome.refused) {
          this.giveUp(head, attempts, outcome.error, 'alert webhook: event refused, given up');
          continue;
        }
        const waitMs = Math.min(this.o.maxRetryMs, this.o.retryMs * 2 ** (attempts - 1));
        waitFor = new Date(at + waitMs).toISOString();
        this.failedStmt.run(attempts, waitFor, outcome.error, head.eventId);
        this.o.log.warn(
          { eventId: head.eventId, attempts, error: outcome.error, retryInMs: waitMs },
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
    else if (waitFor !== null) this.wakeAt(waitFor);
  }

  private giveUp(head: Head, attempts: number, error: string, message: string): void {
    this.givenUpStmt.run(attempts, new Date(this.o.clock.now()).toISOString(), error, head.eventId);
    this.o.log.error({ eventId: head.eventId, attempts, error }, message);
  }

  /** The head's next attempt is due at `at`: run then. */
  private wakeAt(at: string): void {
    if (this.stopped) return;
    const waitMs = Math.max(0, Date.parse(at) - this.o.clock.now());
    // Past the longest retry wait a timer is re-armed anyway (a clock moved by a test, NTP).
    this.timer = setTimeout(() => void this.run(), Math.min(waitMs, this.o.maxRetryMs));
    this.timer.unref();
  }

  /** What the receiver made of one attempt; an error in words when it did not take it. */
  private async post(body: string, eventId: string): Promise<Outcome> {
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
      if (res.status >= 200 && res.status < 300) return { delivered: true };
      return {
        delivered: false,
        error: `HTTP ${res.status}`,
        refused: REFUSED_FOR_GOOD.has(res.status),
      };
    } catch (err) {
      const e = err as Error;
      return {
        delivered: false,
        error: e.name === 'TimeoutError' ? 'timed out' : e.message,
        refused: false,
      };
    }
  }
}
