import { clearUnrefTimer } from '../shared/unref-timer.js';

/**
 * The clocks that end a session without the charger's stop: the start timer (no transaction in
 * time: full refund), the silence timer (a transaction unheard of for too long) and the grace after
 * a connector shows Available. Each is keyed by session; arming one again replaces it. The timers
 * never keep the process alive, and `close` drops them all.
 */
export type EndTimerKind = 'silence' | 'idle';

interface EndTimer {
  timer: NodeJS.Timeout;
  delayMs: number;
}

export class SessionTimers {
  private readonly startTimers = new Map<string, NodeJS.Timeout>();
  private readonly endTimers: Record<EndTimerKind, Map<string, EndTimer>> = {
    silence: new Map(),
    idle: new Map(),
  };

  /** Runs `then` after `delayMs` unless the session's start timer is cleared or armed again. */
  armStart(sessionId: string, delayMs: number, then: () => void): void {
    this.clearStart(sessionId);
    this.startTimers.set(
      sessionId,
      unrefTimer(Math.max(0, delayMs), () => {
        this.startTimers.delete(sessionId);
        then();
      }),
    );
  }

  clearStart(sessionId: string): void {
    clearFrom(this.startTimers, sessionId);
  }

  /** Runs `then` after `delayMs` unless this kind of end timer of the session is cleared first. */
  armEnd(kind: EndTimerKind, sessionId: string, delayMs: number, then: () => void): void {
    const timers = this.endTimers[kind];
    this.clearEnd(kind, sessionId);
    const timer = unrefTimer(Math.max(0, delayMs), () => {
      timers.delete(sessionId);
      then();
    });
    timers.set(sessionId, { timer, delayMs });
  }

  /**
   * Starts the session's end timer of this kind over with its own delay when it was armed with
   * `delayMs` (every meter sample restarts the silence timer: a refresh, not a new timer and
   * closure each time); false when there is no such timer, and the caller arms one.
   */
  restartEnd(kind: EndTimerKind, sessionId: string, delayMs: number): boolean {
    const entry = this.endTimers[kind].get(sessionId);
    if (entry === undefined || entry.delayMs !== delayMs) return false;
    entry.timer.refresh();
    return true;
  }

  clearEnd(kind: EndTimerKind, sessionId: string): void {
    const timers = this.endTimers[kind];
    const entry = timers.get(sessionId);
    clearUnrefTimer(entry?.timer);
    timers.delete(sessionId);
  }

  /** Drops every end timer of the session (it has its outcome). */
  clearEnds(sessionId: string): void {
    this.clearEnd('idle', sessionId);
    this.clearEnd('silence', sessionId);
  }

  close(): void {
    for (const t of this.startTimers.values()) clearUnrefTimer(t);
    this.startTimers.clear();
    for (const timers of Object.values(this.endTimers)) {
      for (const { timer } of timers.values()) clearUnrefTimer(timer);
      timers.clear();
    }
  }
}

function unrefTimer(delayMs: number, then: () => void): NodeJS.Timeout {
  const timer = setTimeout(then, delayMs);
  timer.unref();
  return timer;
}

function clearFrom(timers: Map<string, NodeJS.Timeout>, key: string): void {
  const timer = timers.get(key);
  clearUnrefTimer(timer);
  timers.delete(key);
}
