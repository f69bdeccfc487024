import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/database.js';
import { relaxed } from '../store/durability.js';

/** The stop ladder's steps, in order (stop-assurance.ts). */
export type StopStep = 'remote_stop' | 'zero_power' | 'inoperative' | 'unlock';
export type StopReply = 'accepted' | 'rejected' | 'not_supported' | 'no_answer';
export type LossReason = 'beyond_paid' | 'after_settlement' | 'unproven' | 'offline_unpaid';

export interface OperatorLoss {
  wh: number;
  reason: LossReason;
  at: string;
}

export interface StopAttempt {
  step: StopStep;
  sentAt: string;
  reply: StopReply;
}

/**
 * The operator's record of stops that did not simply work: each ladder step sent and its reply,
 * and energy delivered that cannot be billed. Append-only (migrations/009-field-session.ts); no money.
 */
export class StopRecords {
  private readonly attemptStmt: Statement<[string, StopStep, string, StopReply]>;
  private readonly attemptsStmt: Statement<[string], StopAttempt>;
  private readonly lossStmt: Statement<[string, number, LossReason, string]>;
  private readonly lossOfStmt: Statement<[string, LossReason], { wh: number | null }>;
  private readonly lossesStmt: Statement<[string], OperatorLoss>;

  constructor(private readonly db: Db) {
    this.attemptStmt = db.prepare(
      'INSERT INTO stop_attempts (session_id, step, sent_at, reply) VALUES (?, ?, ?, ?)',
    );
    this.attemptsStmt = db.prepare(
      'SELECT step, sent_at AS sentAt, reply FROM stop_attempts WHERE session_id = ? ORDER BY id',
    );
    this.lossStmt = db.prepare(
      'INSERT INTO operator_losses (session_id, wh, reason, at) VALUES (?, ?, ?, ?)',
    );
    this.lossesStmt = db.prepare(
      'SELECT wh, reason, at FROM operator_losses WHERE session_id = ? ORDER BY id',
    );
    this.lossOfStmt = db.prepare(
      'SELECT sum(wh) AS wh FROM operator_losses WHERE session_id = ? AND reason = ?',
    );
  }

  /**
   * Relaxed (store/durability.ts): a step lost to a power cut is only sent once more, and each
   * stop sent paid an fsync on the main thread here (5 % of the gateway's time, settlement bench).
   */
  attempt(sessionId: string, step: StopStep, sentAt: string, reply: StopReply): void {
    relaxed(this.db, () => this.attemptStmt.run(sessionId, step, sentAt, reply));
  }

  attempts(sessionId: string): StopAttempt[] {
    return this.attemptsStmt.all(sessionId);
  }

  /** Records energy the operator cannot bill; nothing when `wh` is not positive. */
  loss(sessionId: string, wh: number, reason: LossReason, at: string): void {
    if (wh > 0) this.lossStmt.run(sessionId, wh, reason, at);
  }

  losses(sessionId: string): OperatorLoss[] {
    return this.lossesStmt.all(sessionId);
  }

  lossWh(sessionId: string, reason: LossReason): number {
    return this.lossOfStmt.get(sessionId, reason)?.wh ?? 0;
  }
}
