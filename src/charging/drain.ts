import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import type { Charging } from './charging.js';
import { trackOf } from './session-store.js';
import { deliveredWh } from './meter-track.js';
import type { SessionState, SessionStore } from './session-store.js';

/** An open session as an operator sees it before a stop. */
export interface OpenSessionSummary {
  sessionId: string;
  chargerId: string;
  connectorId: string;
  state: SessionState;
  /** Energy the charger's register proves so far (0 before the first register). */
  deliveredWh: number;
}

export interface DrainStatus {
  /** running: Starts taken; draining: refused, waiting for open sessions; drained: none left. */
  state: 'running' | 'draining' | 'drained';
  since: string | null;
  /** When the drain gives up waiting (null: not draining). */
  deadline: string | null;
  openSessions: OpenSessionSummary[];
}

export interface DrainResult {
  /** true: no session was open any more; false: the timeout passed first. */
  drained: boolean;
  openSessions: OpenSessionSummary[];
}

export interface DrainOptions {
  sessions: SessionStore;
  charging: Charging;
  clock: Clock;
  log: Logger;
  /** How often the open sessions are counted while draining. */
  pollMs: number;
}

export const DRAINING_MESSAGE =
  'the gateway is draining for a restart and takes no new sessions; retry in a few minutes';

/**
 * Drain for an upgrade: new Starts are refused (503 gateway_draining), sessions already running
 * go on to their end, and the drain resolves when none is open or the timeout passes. Either way
 * the caller then stops the gateway; sessions still open then resume on restart.
 */
export class Drain {
  private since: string | null = null;
  private deadline: string | null = null;
  private done = false;
  private running: Promise<DrainResult> | null = null;
  private wake: (() => void) | null = null;

  constructor(private readonly o: DrainOptions) {}

  get draining(): boolean {
    return this.since !== null;
  }

  openSessions(): OpenSessionSummary[] {
    return this.o.sessions.allOpen().map((s) => ({
      sessionId: s.id,
      chargerId: s.chargerId,
      connectorId: s.connectorId,
      state: s.state,
      deliveredWh: s.meterStartWh === null ? 0 : deliveredWh(trackOf(s)),
    }));
  }

  status(): DrainStatus {
    return {
      state: this.since === null ? 'running' : this.done ? 'drained' : 'draining',
      since: this.since,
      deadline: this.deadline,
      openSessions: this.openSessions(),
    };
  }

  /** Starts draining (a second call joins the first) and resolves when it is over. */
  drain(timeoutMs: number): Promise<DrainResult> {
    this.running ??= this.run(timeoutMs);
    return this.running;
  }

  /** Ends a drain's wait now (the gateway is stopping anyway). */
  interrupt(): void {
    this.wake?.();
  }

  private async run(timeoutMs: number): Promise<DrainResult> {
    const now = this.o.clock.now();
    this.since = new Date(now).toISOString();
    this.deadline = new Date(now + timeoutMs).toISOString();
    this.o.charging.refuseStarts(DRAINING_MESSAGE);
    let open = this.openSessions();
    this.o.log.warn(
      { openSessions: open, timeoutSeconds: timeoutMs / 1000 },
      `draining: new Starts refused; waiting for ${open.length} open sessions to end`,
    );
    const giveUpAt = Date.now() + timeoutMs;
    let interrupted = false;
    while (open.length > 0 && !interrupted && Date.now() < giveUpAt) {
      interrupted = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(
          () => resolve(false),
          Math.min(this.o.pollMs, giveUpAt - Date.now()),
        );
        this.wake = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
      this.wake = null;
      const before = open.length;
      open = this.openSessions();
      if (open.length !== before) {
        this.o.log.info({ openSessions: open }, `draining: ${open.length} sessions still open`);
      }
    }
    this.done = open.length === 0;
    if (this.done) this.o.log.info('drained: no open sessions');
    else {
      this.o.log.warn(
        { openSessions: open },
        `drain ${interrupted ? 'interrupted' : 'timed out'}: ${open.length} sessions still open`,
      );
    }
    return { drained: this.done, openSessions: open };
  }
}
