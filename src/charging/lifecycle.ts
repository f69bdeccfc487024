import type {
  ChargerCommands,
  ChargerEvents,
  MeterSample,
  TokenVerdict,
  TransactionEnded,
  TransactionStarted,
} from '../ocpp/port.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import type { Db } from '../store/database.js';
import { LimitWatch } from './limit-watch.js';
import type { SessionOutcomes } from './outcomes.js';
import type { Session, SessionStore } from './session-store.js';

export interface LifecycleOptions {
  db: Db;
  clock: Clock;
  log: Logger;
  sessions: SessionStore;
  outcomes: SessionOutcomes;
  chargers: ChargerCommands;
  startTimeoutMs: number;
  stopLeadMs: number;
  stopRetryMs: number;
}

const STOP_ATTEMPTS = 3;

/**
 * Everything that happens to a session after the Start response: the EV starting (or never
 * starting), meter samples and the paid-energy stop, the charger's stop message and settlement,
 * and picking up open sessions after a restart. It is the charging side of the charger port.
 */
export class SessionLifecycle implements ChargerEvents {
  private readonly startTimers = new Map<string, NodeJS.Timeout>();
  private readonly watch: LimitWatch;
  private closed = false;

  constructor(private readonly o: LifecycleOptions) {
    this.watch = new LimitWatch({
      leadMs: o.stopLeadMs,
      onLimit: (id) => this.background(id, this.stopForLimit(id)),
    });
  }

  private now(): string {
    return new Date(this.o.clock.now()).toISOString();
  }

  /** The charger accepted the remote start: wait for the EV, refund if it never starts. */
  remoteStartAccepted(sessionId: string): void {
    const at = this.now();
    // Not authorized when the charger's StartTransaction overtook its reply: already charging.
    const authorized = this.o.db.transaction(() => {
      if (!this.o.sessions.markAuthorized(sessionId, at)) return false;
      const session = this.o.sessions.get(sessionId);
      if (session) this.o.outcomes.event(session, 'authorized', at);
      return true;
    })();
    if (authorized) this.armStartTimer(sessionId, this.o.startTimeoutMs, 'ev_not_connected');
  }

  authorize(chargerId: string, idToken: string, connectorId: string | null): TokenVerdict {
    const s = this.o.sessions.byIdToken(idToken);
    const ok =
      s !== undefined &&
      s.chargerId === chargerId &&
      (connectorId === null || s.connectorId === connectorId) &&
      (s.state === 'authorizing' || s.state === 'authorized' || s.state === 'charging');
    return { accepted: ok };
  }

  transactionStarted(e: TransactionStarted): TokenVerdict {
    const s = this.o.sessions.byIdToken(e.idToken);
    if (!s || s.chargerId !== e.chargerId || s.connectorId !== e.connectorId)
      return { accepted: false };
    if (
      (s.state === 'charging' || s.state === 'stopping') &&
      s.transactionRef === e.transactionRef
    ) {
      return { accepted: true };
    }
    if (s.state !== 'authorizing' && s.state !== 'authorized') {
      this.o.log.warn(
        { sessionId: s.id, state: s.state },
        'start for a session that cannot start: refused',
      );
      return { accepted: false };
    }
    const at = this.now();
    // The state change and its outbox event commit together (the uplink must see every change).
    this.o.db.transaction(() => {
      if (!this.o.sessions.markCharging(s.id, e.transactionRef, e.meterStartWh, at)) return;
      this.o.outcomes.event(s, 'charging', at, {
        transactionRef: e.transactionRef,
        meterStartWh: e.meterStartWh,
      });
    })();
    this.clearStartTimer(s.id);
    if (e.meterStartWh !== null) this.watch.begin(s.id, s.limitWh, 0, e.receivedAtMs);
    this.o.log.info({ sessionId: s.id, transactionRef: e.transactionRef }, 'session charging');
    return { accepted: true };
  }

  meterSample(m: MeterSample): void {
    if (m.transactionRef === null || m.energyWh === null) return;
    const s = this.o.sessions.byTransactionRef(m.chargerId, m.transactionRef);
    if (!s || (s.state !== 'charging' && s.state !== 'stopping')) return;
    if (s.meterStartWh === null) {
      // A queued sample may have been measured before one delivered ahead of it, on the far side
      // of a meter reset: taken as the start, it would bill energy never delivered. Only a live
      // one, measured as it arrives, can stand in for the start register.
      if (!m.live) {
        this.o.log.warn(
          { sessionId: s.id, energyWh: m.energyWh },
          'no start register: queued sample not taken as the start',
        );
        return;
      }
      // The charger never said where its register stood at the start: from here on we can prove it.
      this.o.sessions.setMeterStart(s.id, m.energyWh);
      this.o.log.warn(
        { sessionId: s.id, energyWh: m.energyWh },
        'no start register: first sample taken',
      );
      this.watch.begin(s.id, s.limitWh, 0, m.receivedAtMs);
      return;
    }
    if (m.energyWh < s.meterStartWh) {
      this.o.log.warn(
        { sessionId: s.id, energyWh: m.energyWh },
        'meter below transaction start: ignored',
      );
      return;
    }
    this.o.sessions.recordMeter(s.id, m.energyWh);
    // Samples a charger queued while offline are history: they move the register, not the rate.
    if (m.live) this.watch.sample(s.id, m.energyWh - s.meterStartWh, m.receivedAtMs);
  }

  transactionEnded(e: TransactionEnded): void {
    const s = this.o.sessions.byTransactionRef(e.chargerId, e.transactionRef);
    if (!s) return;
    this.watch.end(s.id);
    if (s.state !== 'charging' && s.state !== 'stopping') return; // already settled: a repeat
    const delivered = this.deliveredWh(s, e.meterStopWh);
    if (this.o.outcomes.settle(s.id, delivered, e.reason, this.now())) {
      this.o.log.info(
        { sessionId: s.id, deliveredWh: delivered, reason: e.reason },
        'session settled',
      );
    }
  }

  chargerOnline(chargerId: string): void {
    // A stop that could not be delivered while the charger was away is sent again.
    for (const s of this.o.sessions.allOpen()) {
      if (s.chargerId === chargerId && s.state === 'stopping')
        this.background(s.id, this.sendStop(s, 1));
    }
  }

  /** After a restart: resolve what was half-way, resume the rest. */
  recover(): void {
    const nowMs = this.o.clock.now();
    for (const s of this.o.sessions.allOpen()) {
      switch (s.state) {
        case 'authorizing':
          // The remote start's answer died with the previous process. If the charger did accept
          // it, it reports the transaction with the session's token and the session goes on;
          // if it says nothing within the start timeout, the driver gets everything back.
          this.armStartTimer(s.id, this.remaining(s.createdAt, nowMs), 'gateway_restarted');
          break;
        case 'authorized':
          this.armStartTimer(
            s.id,
            this.remaining(s.authorizedAt ?? s.createdAt, nowMs),
            'ev_not_connected',
          );
          break;
        case 'charging':
          if (s.meterStartWh === null) break; // the first sample will begin the watch
          this.watch.begin(s.id, s.limitWh, (s.lastMeterWh ?? 0) - s.meterStartWh, nowMs);
          break;
        default:
          break;
      }
    }
  }

  close(): void {
    this.closed = true;
    for (const t of this.startTimers.values()) clearTimeout(t);
    this.startTimers.clear();
    this.watch.endAll();
  }

  /**
   * Energy delivered by the charger's own register. A stop register below the start one (a meter
   * that reset, a garbled value) is not trusted: the last register we saw counts instead.
   */
  private deliveredWh(s: Session, meterStopWh: number | null): number {
    if (s.meterStartWh === null) {
      // No register was ever seen for this transaction: no energy can be proven, none is charged.
      this.o.log.warn({ sessionId: s.id, meterStopWh }, 'no start register known: settling 0 Wh');
      return 0;
    }
    const start = s.meterStartWh;
    if (meterStopWh !== null && meterStopWh >= start) return meterStopWh - start;
    this.o.log.warn(
      { sessionId: s.id, meterStopWh },
      'stop register unusable: settling on last sample',
    );
    return Math.max(0, (s.lastMeterWh ?? start) - start);
  }

  /** Work that runs after its trigger has returned: its failure is logged, never left unhandled. */
  private background(sessionId: string, work: Promise<void>): void {
    work.catch((err: unknown) =>
      this.o.log.error(
        { sessionId, err: (err as Error).message },
        'session background task failed',
      ),
    );
  }

  private remaining(sinceIso: string, nowMs: number): number {
    return Math.max(0, Date.parse(sinceIso) + this.o.startTimeoutMs - nowMs);
  }

  /** Refunds the session in full unless the charger reports its transaction within `delayMs`. */
  private armStartTimer(sessionId: string, delayMs: number, reason: string): void {
    this.clearStartTimer(sessionId);
    const timer = setTimeout(() => {
      this.startTimers.delete(sessionId);
      if (this.o.outcomes.refund(sessionId, reason, this.now())) {
        this.o.log.info({ sessionId, reason }, 'no transaction started in time: session refunded');
      }
    }, delayMs);
    timer.unref();
    this.startTimers.set(sessionId, timer);
  }

  private clearStartTimer(sessionId: string): void {
    const timer = this.startTimers.get(sessionId);
    if (timer) clearTimeout(timer);
    this.startTimers.delete(sessionId);
  }

  private async stopForLimit(sessionId: string): Promise<void> {
    const at = this.now();
    const s = this.o.sessions.get(sessionId);
    if (!s || s.state !== 'charging') return;
    this.o.db.transaction(() => {
      if (this.o.sessions.markStopping(s.id, at)) this.o.outcomes.event(s, 'stopping', at);
    })();
    this.o.log.info({ sessionId }, 'paid energy reached: stopping');
    await this.sendStop(s, STOP_ATTEMPTS);
  }

  private async sendStop(s: Session, attempts: number): Promise<void> {
    for (let attempt = 1; attempt <= attempts && !this.closed; attempt++) {
      if (this.o.sessions.get(s.id)?.state !== 'stopping' || !s.transactionRef) return;
      try {
        const outcome = await this.o.chargers.requestStop(s.chargerId, s.transactionRef);
        if (outcome === 'accepted') return;
        this.o.log.warn({ sessionId: s.id, attempt }, 'charger refused the stop');
      } catch (err) {
        this.o.log.warn(
          { sessionId: s.id, attempt, err: (err as Error).message },
          'stop not delivered',
        );
      }
      await new Promise((r) => setTimeout(r, this.o.stopRetryMs).unref());
    }
  }
}
