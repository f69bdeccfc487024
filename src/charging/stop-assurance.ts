import type { ChargerCommands } from '../ocpp/port.js';
import type { Logger } from '../shared/log.js';
import type { SessionStore } from './session-store.js';

export interface StopAssuranceOptions {
  log: Logger;
  sessions: SessionStore;
  chargers: ChargerCommands;
  /** First pause before a stop is sent again; it doubles up to STOP_RETRY_MAX_MS. */
  stopRetryMs: number;
  /** Work that runs after its trigger has returned: its failure must be logged. */
  background: (sessionId: string, work: Promise<void>) => void;
}

const STOP_RETRY_MAX_MS = 60_000;

/**
 * Sees a stopping session's transaction stopped: one loop per session sends the stop until the
 * charger accepts it or the transaction ends.
 */
export class StopAssurance {
  /** Sessions with a stop loop running, and how to cut its pause short (charger back online). */
  private readonly loops = new Map<string, () => void>();
  private closed = false;

  constructor(private readonly o: StopAssuranceOptions) {}

  /** Starts the stop loop of a session, or cuts its pause short if it is already running. */
  stop(sessionId: string): void {
    const wake = this.loops.get(sessionId);
    if (wake) wake();
    else this.o.background(sessionId, this.loop(sessionId));
  }

  close(): void {
    this.closed = true;
    for (const wake of this.loops.values()) wake();
  }

  /**
   * Sends the stop until the charger accepts it or the transaction ends, for as long as the
   * session is stopping: a refused, unanswered or undeliverable stop is sent again after a pause
   * that doubles up to a minute; a charger coming back online cuts the pause short.
   */
  private async loop(sessionId: string): Promise<void> {
    let pauseMs = this.o.stopRetryMs;
    this.loops.set(sessionId, () => undefined);
    try {
      for (let attempt = 1; !this.closed; attempt++) {
        const s = this.o.sessions.get(sessionId);
        if (s?.state !== 'stopping' || !s.transactionRef) return;
        if (this.o.chargers.isOnline(s.chargerId)) {
          try {
            const outcome = await this.o.chargers.requestStop(s.chargerId, s.transactionRef);
            if (outcome === 'accepted') return;
            this.o.log.warn({ sessionId, attempt }, 'charger refused the stop');
          } catch (err) {
            this.o.log.warn(
              { sessionId, attempt, err: (err as Error).message },
              'stop not delivered',
            );
          }
        }
        await this.pause(sessionId, pauseMs);
        pauseMs = Math.min(pauseMs * 2, STOP_RETRY_MAX_MS);
      }
    } finally {
      this.loops.delete(sessionId);
    }
  }

  private pause(sessionId: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.loops.set(sessionId, done);
    });
  }
}
