/**
 * The clocks that end a session without the charger's stop: the start timer (no transaction in
 * time: full refund), the silence timer (a transaction unheard of for too long) and the grace after
 * a connector shows Available. Each is keyed by session; arming one again replaces it. The timers
 * never keep the process alive, and `close` drops them all.
 */
export type EndTimerKind = 'silence' | 'idle';

export class SessionTimers {
  private readonly startTimers = new Map<string, NodeJS.Timeout>();
  private readonly endTimers = new Map<string, NodeJS.Timeout>();

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
    const key = `${kind}:${sessionId}`;
    this.clearEnd(kind, sessionId);
    this.endTimers.set(
      key,
      unrefTimer(Math.max(0, delayMs), () => {
        this.endTimers.delete(key);
        then();
      }),
    );
  }

  clearEnd(kind: EndTimerKind, sessionId: string): void {
    clearFrom(this.endTimers, `${kind}:${sessionId}`);
  }

  /** Drops every end timer of the session (it has its outcome). */
  clearEnds(sessionId: string): void {
    this.clearEnd('idle', sessionId);
    this.clearEnd('silence', sessionId);
  }

  close(): void {
    for (const t of this.startTimers.values()) clearTimeout(t);
    this.startTimers.clear();
    for (const t of this.endTimers.values()) clearTimeout(t);
    this.endTimers.clear();
  }
}

function unrefTimer(delayMs: number, then: () => void): NodeJS.Timeout {
  const timer = setTimeout(then, delayMs);
  timer.unref();
  return timer;
}

function clearFrom(timers: Map<string, NodeJS.Timeout>, key: string): void {
  const timer = timers.get(key);
  if (timer) clearTimeout(timer);
  timers.delete(key);
}
