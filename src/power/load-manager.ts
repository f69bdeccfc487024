import type { PowerAllowance } from '../charging/power-allowance.js';
import type { MeterSample } from '../ocpp/port.js';
import { clearUnrefTimer } from '../shared/unref-timer.js';
import { allocationRound } from './allocation-round.js';
import { DrawReadings } from './draw-readings.js';
import {
  connectorKey,
  type LoadManagerOptions,
  type NodeView,
  type SessionAllocationView,
  type SessionPower,
} from './power-model.js';
import { PowerReads } from './power-reads.js';
import { PowerState } from './power-state.js';
import { ProfileSender } from './profile-sender.js';

/** Pause before a round that could not deliver everything is tried again. */
export const RETRY_MS = 2000;

/**
 * The site's load manager: on every change (session start or stop, limit change, power departing
 * from its allowance, charger reconnect or boot) it reallocates (allocation-round.ts) and sends
 * the new allowances as charging profiles (profile-sender.ts), every lower one first and answered
 * (or timed out: that connector is then still counted at its old, higher allowance) before any
 * raise, so the allowances never add up to more than a node's limit, in flight included. It hears
 * the chargers after the charging layer (PowerListener) and never calls into it: charging reads
 * the allowances through PowerAllowance.
 */
export class LoadManager implements PowerAllowance {
  private readonly state: PowerState;
  private readonly reads: PowerReads;
  private readonly sender: ProfileSender;
  private readonly readings: DrawReadings;
  private running: Promise<void> | null = null;
  private again: string | null = null;
  private unsubscribe: (() => void) | null = null;
  private closed = false;
  private retryTimer: NodeJS.Timeout | null = null;
  /** Told when a charger accepted a session's new allowance (the stop prediction). */
  private readonly allowanceChanged = new Set<(sessionId: string) => void>();

  constructor(private readonly o: LoadManagerOptions) {
    this.state = new PowerState(o);
    this.reads = new PowerReads(this.state, o);
    this.sender = new ProfileSender(this.state, o, {
      accepted: (sessionId) => {
        for (const changed of this.allowanceChanged) changed(sessionId);
      },
      refusedFound: () => {
        this.again ??= 'profile_refused';
      },
    });
    this.readings = new DrawReadings(this.state, o, this.sender, (reason) => {
      void this.reallocate(reason);
    });
  }

  /** Starts listening to limit changes and sends the safe default to every online charger. */
  start(): void {
    this.unsubscribe = this.o.limits.onChange(() => this.reallocate('limit'));
    const chargers = new Set(this.o.connectors().map((c) => c.chargerId));
    for (const chargerId of chargers) {
      if (this.o.chargers.isOnline(chargerId)) this.chargerUp(chargerId, 'start');
    }
  }

  close(): void {
    this.closed = true;
    this.unsubscribe?.();
    clearUnrefTimer(this.retryTimer);
  }

  /** The driver's read of what the session may draw now, or null (PowerReads). */
  sessionPower(sessionId: string): SessionPower | null {
    return this.reads.sessionPower(sessionId);
  }

  /** What the session's charger accepted as its ceiling, W, or null (PowerReads). */
  confirmedPowerW(sessionId: string): number | null {
    return this.reads.confirmedPowerW(sessionId);
  }

  allowedPowerW(sessionId: string): number | null {
    return this.confirmedPowerW(sessionId);
  }

  onChange(changed: (sessionId: string) => void): () => void {
    this.allowanceChanged.add(changed);
    return () => this.allowanceChanged.delete(changed);
  }

  /** What a session started now on the connector would be allocated, W, or null (a quote). */
  powerIfStarted(chargerId: string, connectorId: string, owedWh: number): number | null {
    return this.reads.powerIfStarted(chargerId, connectorId, owedWh);
  }

  /** Every node's limit, allowance and measured power, and every session's allocation. */
  view(): { nodes: NodeView[]; sessions: SessionAllocationView[] } {
    return this.reads.view();
  }

  /** Each managed connector's default as if every one were busy (PowerState). */
  safeDefaults(): Map<string, number> {
    return this.state.safeDefaults();
  }

  /**
   * Reallocates now, or once the one under way has finished (changes during it are folded into
   * one more round). Resolves when the allowances it computed have been sent.
   */
  reallocate(reason: string): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.running) {
      this.again = reason;
      return this.running;
    }
    this.running = (async () => {
      let next: string | null = reason;
      while (next !== null && !this.closed) {
        this.again = null;
        this.o.counters?.reallocation(next);
        let retry = false;
        try {
          retry = await allocationRound(this.state, this.sender, this.o, next);
        } catch (err) {
          this.o.log.error({ err, reason: next }, 'power reallocation failed');
          retry = true;
        }
        next = this.again;
        if (retry && next === null) this.retryLater();
      }
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** A lower that was not answered, or a raise held back by it, is tried again after a pause. */
  private retryLater(): void {
    if (this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.reallocate('retry');
    }, this.o.retryMs ?? RETRY_MS);
    this.retryTimer.unref();
  }

  /** Resolves once no reallocation is under way (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Its connector's last reading no longer says what it draws (the site view). */
  forgetReading(chargerId: string, connectorId: string): void {
    this.state.measured.delete(connectorKey(chargerId, connectorId));
  }

  /** A live power reading: the site view, and a departure from its allowance reallocates. */
  sampled(sample: MeterSample): void {
    this.readings.sampled(sample);
  }

  /**
   * A charger that connected, reconnected or booted forgets nothing we know but may have lost
   * its profiles: it gets its connectors' safe default and its sessions' allowances again.
   */
  chargerUp(chargerId: string, reason: string): void {
    if (this.closed) return;
    const hadRefused = this.state.refusing.delete(chargerId);
    for (const s of this.o.active()) {
      if (s.chargerId !== chargerId) continue;
      // What it drew past its profile is judged again once it has accepted one anew.
      for (const map of [this.state.drawing, this.state.firstPast, this.state.firstWithin])
        map.delete(s.sessionId);
      if (reason === 'boot') this.state.unheard.add(s.sessionId);
      if (!this.state.confirmed.has(s.sessionId)) continue;
      this.state.unsure.add(s.sessionId);
      // Its readings from now until its profile is accepted again are not judged; the ones it
      // queued while offline still are, against the profile it held then.
      this.state.allowances.set(s.sessionId, null, this.state.now());
    }
    // A busy connector's default matters after its session (its end's round sets it to what is
    // left); an idle one's is what the sessions leave, each counted at the higher of what it may
    // draw now and what it was last allocated.
    const allBusy = this.state.safeDefaults();
    const connectors = this.state.connectorMap();
    const active = this.o
      .active()
      .filter((s) => connectors.has(connectorKey(s.chargerId, s.connectorId)));
    const idle = this.state.defaultTargets(connectors, active, (s, c) => {
      const a = this.state.allocation.get(s.sessionId);
      return Math.max(typeof a === 'number' ? a : 0, this.state.counted(s, c));
    });
    const mine = [...connectors.values()].filter((c) => c.chargerId === chargerId);
    void (async () => {
      await Promise.all(
        mine.map(async (c) => {
          const k = connectorKey(c.chargerId, c.connectorId);
          const watts = idle.get(k) ?? allBusy.get(k) ?? 0;
          const outcome = await this.sender.limit(c.chargerId, c.connectorId, {
            watts,
            ...(c.phases ? { phases: c.phases } : {}),
          });
          if (outcome === 'accepted') this.state.defaults.set(k, watts);
          else {
            this.state.defaults.delete(k);
            if (outcome === 'rejected' || outcome === 'not_supported')
              this.sender.refused(chargerId, outcome);
          }
        }),
      );
      await this.reallocate(hadRefused ? `${reason}_retry` : reason);
    })();
  }
}
