import { atomic } from '../store/atomic.js';
import type {
  ChargerCommands,
  ChargerEvents,
  ConnectorStatus,
  MeasuredTime,
  MeterSample,
  StationCost,
  TokenVerdict,
  TransactionEnded,
  TransactionStarted,
} from '../ocpp/port.js';
import { isoAt, type Clock } from '../shared/clock.js';
import { killPoint } from '../shared/kill-points.js';
import type { Logger } from '../shared/log.js';
import type { Db } from '../store/database.js';
import { relaxed } from '../store/durability.js';
import { groupCommit } from '../store/group-commit.js';
import { LimitWatch, type ChargerStamp } from './limit-watch.js';
import {
  judgePower,
  judgeRegister,
  possibleWh,
  type Conditions,
  type Doubt,
  type PowerTrail,
} from './meter-model.js';
import { deliveredAtStop, deliveredWh } from './meter-track.js';
import type { SessionOutcomes } from './outcomes.js';
import {
  meterStateOf,
  trackOf,
  type MeteredSession,
  type Session,
  type SessionStore,
} from './session-store.js';
import { SessionTimers } from './session-timers.js';
import { StopAssurance } from './stop-assurance.js';
import type { PowerAllowance } from './power-allowance.js';
import { RefusedTransactions } from './refused-transactions.js';
import { StopRecords } from './stop-records.js';
import { StationCosts } from './station-costs.js';
import { withPaidLimit } from './station-limit.js';
import { stopLineOf } from './stop-line.js';
import type { TapDesk } from './taps.js';

export interface LifecycleOptions {
  db: Db;
  clock: Clock;
  log: Logger;
  sessions: SessionStore;
  outcomes: SessionOutcomes;
  chargers: ChargerCommands;
  startTimeoutMs: number;
  stopLeadMs: number;
  /** First pause before a stop is sent again (stop-assurance.ts). */
  stopRetryMs: number;
  /** Longest wait for a charger that accepted a stop step to show it stopped (stop-assurance). */
  stopVerifyMs: number;
  /** A charger's meter sample interval during a transaction: the stop is checked after two. */
  sampleIntervalMs: (chargerId: string) => number;
  /** After a restart, how long a session waits for its charger before it may be refunded. */
  recoveryWaitMs: number;
  /** How long a connector reported Available may go without its transaction's stop. */
  stopGraceMs: number;
  /** How long a transaction may go unheard of before it is settled on its last register. */
  silenceMs: number;
  /** The connector's maximum power, margin included (W): the plausibility bound. */
  maxPowerW: (chargerId: string, connectorId: string) => number;
  /** The power a session is allowed now (site power management); absent when nothing limits it. */
  allowance?: PowerAllowance;
  /** Bound cards and vehicles that pay from the wallet (taps.ts); absent: app tokens only. */
  taps?: TapDesk;
}

export type OperatorStop =
  | { kind: 'stopping'; chargerId: string; transactionRef: string }
  | { kind: 'not_found' }
  | { kind: 'not_stoppable'; session: Session }
  | { kind: 'offline'; chargerId: string };

/**
 * Everything that happens to a session after the Start response: the EV starting (or never
 * starting), meter samples and the paid-energy stop, the charger's stop message and settlement,
 * and picking up open sessions after a restart. It is the charging side of the charger port.
 */
export class SessionLifecycle implements ChargerEvents {
  private readonly timers = new SessionTimers();
  /** Sessions whose charger rebooted since their last sample: their register may have reset. */
  private readonly rebooted = new Set<string>();
  /**
   * Sessions whose charger rebooted and has not since shown their connector in use (Charging,
   * Suspended*): a status saying no transaction runs there means it was forgotten. A sample
   * does not clear it: a charger that forgot the transaction still answers a triggered one.
   */
  private readonly unconfirmedAfterBoot = new Set<string>();
  /** Sessions whose connector was seen in use (not Available) since their transaction started. */
  private readonly seenInUse = new Set<string>();
  private readonly watch: LimitWatch;
  private readonly stops: StopAssurance;
  private readonly records: StopRecords;
  private readonly costs: StationCosts;
  private readonly refusedTx: RefusedTransactions;
  /** Sessions picked up after a restart whose charger has not connected since: refund reason. */
  private readonly awaitingCharger = new Map<string, string>();
  /**
   * What the power each session's charger said may have delivered since its last counted reading
   * (meter-model.ts); in memory: after a restart the possible energy it raised stays in the row.
   */
  private readonly powerTrails = new Map<string, PowerTrail>();
  /** When a transaction that started without a start register was started (measured, our clock). */
  private readonly startlessSince = new Map<string, number>();

  constructor(private readonly o: LifecycleOptions) {
    this.records = new StopRecords(o.db);
    this.costs = new StationCosts(o.db, o.log);
    this.refusedTx = new RefusedTransactions({
      log: o.log,
      chargers: o.chargers,
      retryMs: o.stopRetryMs,
      verifyMs: o.stopVerifyMs,
    });
    this.stops = new StopAssurance({
      clock: o.clock,
      log: o.log,
      sessions: o.sessions,
      chargers: o.chargers,
      records: this.records,
      stopRetryMs: o.stopRetryMs,
      stopVerifyMs: o.stopVerifyMs,
      sampleIntervalMs: o.sampleIntervalMs,
      deliveredWh: (s) => (s.meterStartWh === null ? null : possibleOf(s)),
      background: (id, work) => this.background(id, work),
    });
    this.watch = new LimitWatch({
      leadMs: o.stopLeadMs,
      onLimit: (id) => this.stopAtLimit(id),
      ...(o.allowance ? { ceilingW: (id: string) => o.allowance?.allowedPowerW(id) ?? null } : {}),
    });
    // The session's allowed power changed: its paid-energy stop is planned again.
    o.allowance?.onChange((id) => this.watch.ceilingChanged(id, this.o.clock.now()));
  }

  private now(): string {
    return isoAt(this.o.clock.now());
  }

  /**
   * The charger accepted the remote start: wait for the EV, refund if it never starts. Resolves
   * once the mark is committed (group commit), so a Start is answered after it. Deferred: the
   * debit was the Start's one sync; a power cut that takes the mark back leaves the session
   * `authorizing`, which recovery settles with the charger (kept if it reports the transaction,
   * refunded otherwise), and its outbox row never reached the uplink (store/durability.ts).
   */
  async remoteStartAccepted(sessionId: string): Promise<void> {
    const at = this.now();
    // Not authorized when the charger's StartTransaction overtook its reply: already charging.
    const authorized = await groupCommit(this.o.db).deferred(() => {
      if (!this.o.sessions.markAuthorized(sessionId, at)) return false;
      const session = this.o.sessions.get(sessionId);
      if (session) this.o.outcomes.event(session, 'authorized', at);
      return true;
    });
    if (authorized) this.armStartTimer(sessionId, this.o.startTimeoutMs, 'ev_not_connected');
  }

  /** An app session's one-time token first (as it always was), then a bound card or vehicle. */
  authorize(chargerId: string, idToken: string, connectorId: string | null): TokenVerdict {
    const s = this.o.sessions.byIdToken(idToken);
    if (s === undefined && this.o.taps) return this.o.taps.authorize(chargerId, idToken);
    const ok =
      s !== undefined &&
      s.chargerId === chargerId &&
      (connectorId === null || s.connectorId === connectorId) &&
      (s.state === 'authorizing' || s.state === 'authorized' || s.state === 'charging');
    return { accepted: ok };
  }

  /** A transaction answered Invalid is also stopped: nothing pays for it (refused-transactions.ts). */
  transactionStarted(e: TransactionStarted): TokenVerdict {
    const taps = this.o.taps;
    const verdict =
      taps && this.o.sessions.byIdToken(e.idToken) === undefined
        ? this.tapStart(taps, e)
        : this.judgeStart(e);
    if (!verdict.accepted) this.refusedTx.refused(e.chargerId, e.transactionRef);
    return verdict;
  }

  /** A charger computed the session's cost itself: compared with the gateway's, never billed. */
  stationCost(cost: StationCost): void {
    const s = this.o.sessions.byTransactionRef(cost.chargerId, cost.transactionRef);
    if (s) this.costs.compare(s, cost, this.now());
  }

  private judgeStart(e: TransactionStarted): TokenVerdict {
    const s = this.o.sessions.byIdToken(e.idToken);
    if (!s || s.chargerId !== e.chargerId || s.connectorId !== e.connectorId)
      return { accepted: false };
    if (
      (s.state === 'charging' || s.state === 'stopping') &&
      s.transactionRef === e.transactionRef
    ) {
      return withPaidLimit({ accepted: true }, s);
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
    atomic(this.o.db, () => this.markStarted(s, e, at));
    this.afterStart(s, e);
    // What the session paid for, for a charger that holds the limit itself (station-limit.ts).
    return withPaidLimit({ accepted: true }, s);
  }

  /**
   * A bound card or vehicle started the transaction: its session is opened, debited and marked
   * charging in one transaction, the caller's (the adapter's group commit, strict): the charger's
   * answer is sent once they are durable, and a repeated start finds the session (taps.ts).
   */
  private tapStart(taps: TapDesk, e: TransactionStarted): TokenVerdict {
    const at = this.now();
    const opened = atomic(this.o.db, () => {
      const tap = taps.start(e, at);
      if ('session' in tap) this.markStarted(tap.session, e, at, tap.detail);
      return tap;
    });
    if ('verdict' in opened) return opened.verdict;
    this.afterStart(opened.session, e);
    return withPaidLimit({ accepted: true, status: 'accepted' }, opened.session);
  }

  /** The session's transaction started: charging, with its 'charging' event. */
  private markStarted(
    s: Session,
    e: TransactionStarted,
    at: string,
    detail: Record<string, unknown> = {},
  ): void {
    const time = e.time;
    if (
      !this.o.sessions.markCharging(
        s.id,
        e.transactionRef,
        e.meterStartWh,
        at,
        time.measuredAtMs,
        time,
      )
    )
      return;
    this.o.outcomes.event(s, 'charging', at, {
      transactionRef: e.transactionRef,
      meterStartWh: e.meterStartWh,
      ...detail,
    });
    if (e.meterStartUnrounded !== undefined)
      this.o.sessions.setMeterStartUnrounded(s.id, e.meterStartUnrounded);
  }

  /** What a started session is watched with from now on: silence, the paid-energy stop. */
  private afterStart(s: Session, e: TransactionStarted): void {
    const time = e.time;
    this.timers.clearStart(s.id);
    this.heard(s.id);
    if (e.meterStartWh === null) this.startlessSince.set(s.id, time.measuredAtMs);
    if (
      e.meterStartWh !== null &&
      this.watch.begin(s.id, s.limitWh, 0, e.receivedAtMs, time.stampMs)
    )
      this.stopAtLimit(s.id);
    this.o.log.info({ sessionId: s.id, transactionRef: e.transactionRef }, 'session charging');
  }

  /**
   * One SQLite transaction per sample: the activity stamp and the register move commit together.
   * Relaxed durability (store/durability.ts): a register lost to a power cut costs the driver
   * nothing, and a sample that reaches the paid energy (its 'stopping' event) is synced before the
   * reply. The adapters hand samples in from their group-commit write, whose savepoint already
   * holds the sample whole (a throw rolls it back with the message's other writes): no second one.
   */
  meterSample(m: MeterSample): void {
    if (this.o.db.inTransaction) this.applySample(m);
    else relaxed(this.o.db, () => this.applySample(m));
  }

  private applySample(m: MeterSample): void {
    if (m.transactionRef === null || (m.energyWh === null && m.powerW === null)) return;
    const s = this.o.sessions.meteredByTransactionRef(m.chargerId, m.transactionRef);
    if (!s || (s.state !== 'charging' && s.state !== 'stopping')) return;
    const at = this.now();
    this.restartSilence(s.id);
    if (m.energyWh === null) {
      this.saidPower(s, m, m.powerW as number, at);
      return;
    }
    // Most samples move the register: the activity stamp rides on that row update (one write per
    // sample, not two); a sample that moves nothing still stamps it.
    if (!this.applyRegister(s, m, m.energyWh, at)) {
      this.o.sessions.touch(s.id, at);
    }
  }

  /**
   * Applies the sample's register to the session: the model judges it (meter-model.ts), this
   * persists, logs and watches what it said. True when it wrote the register (and `at`).
   */
  private applyRegister(s: MeteredSession, m: MeterSample, energyWh: number, at: string): boolean {
    const meter = meterStateOf(s);
    const conditions = this.conditionsOf(s);
    const judgement = judgeRegister(
      meter,
      {
        energyWh,
        powerW: m.powerW,
        timestamp: m.timestamp,
        receivedAtMs: m.receivedAtMs,
        time: m.time,
        live: m.live,
      },
      conditions,
    );
    if ('rebasedStartWh' in judgement) {
      this.o.log.warn(
        {
          sessionId: s.id,
          meterStartWh: s.meterStartWh,
          energyWh,
          startWh: judgement.rebasedStartWh,
        },
        'start register a thousandth of the first sample: read in kWh',
      );
    }
    switch (judgement.kind) {
      case 'not_counted':
        this.o.log.warn({ sessionId: s.id, energyWh }, NOT_COUNTED[judgement.why]);
        return false;
      case 'start': {
        // From here on we can prove it; what the power said before it is a gap no reading proves.
        const { gapWh } = judgement;
        this.powerTrails.delete(s.id);
        this.startlessSince.delete(s.id);
        this.o.sessions.setMeterStart(s.id, energyWh, at, m.time.measuredAtMs, m.time, gapWh);
        this.o.log.warn(
          { sessionId: s.id, energyWh, gapWh },
          'no start register: first sample taken',
        );
        const reached = this.watch.watching(s.id)
          ? this.watch.sample(s.id, gapWh, m.receivedAtMs, stampOf(m), m.live)
          : this.watch.begin(s.id, s.limitWh, gapWh, m.receivedAtMs, m.time.stampMs);
        if (reached) this.stopAtLimit(s.id);
        return false;
      }
      case 'doubted':
        this.doubted(s, m, energyWh, judgement.doubt, judgement.possibleWh, at);
        return true;
      case 'counted':
        break;
    }
    this.rebooted.delete(s.id);
    this.powerTrails.delete(s.id); // a counted reading says more than the power before it
    const { track, possibleWh, gapWh, verdict } = judgement;
    this.o.sessions.setSegment(s.id, track, m.timestamp, at, { possibleWh, gapWh });
    if (verdict !== 'advanced') {
      this.o.log.warn(
        { sessionId: s.id, energyWh, carriedWh: track.carriedWh },
        verdict === 'reset'
          ? 'register reset: counting a new segment'
          : 'register dropped (a reboot, or below the segment start): held until the next sample',
      );
    }
    // On the charger's clock: a queued burst spans the time it was measured over (limit-watch.ts).
    // The stop is planned on what may have been delivered (docs/money.md).
    if (this.watch.sample(s.id, possibleWh, m.receivedAtMs, stampOf(m), m.live))
      this.stopAtLimit(s.id);
    return true;
  }

  /** What the model is told beside a reading of the session's meter. */
  private conditionsOf(s: MeteredSession): Conditions {
    return {
      maxPowerW: this.o.maxPowerW(s.chargerId, s.connectorId),
      afterReboot: this.rebooted.has(s.id),
      rateWhPerMs: this.watch.rateWhPerMs(s.id),
      power: this.powerTrails.get(s.id) ?? null,
    };
  }

  /**
   * A reading with the power the charger draws and no register: it proves nothing, but the
   * session may have delivered what that power delivers since its last counted reading (or its
   * start), and the stop is planned on it (meter-model.ts).
   */
  private saidPower(s: MeteredSession, m: MeterSample, powerW: number, at: string): void {
    const startedAtMs = this.startlessSince.get(s.id) ?? Date.parse(s.startedAt ?? '');
    const meter = meterStateOf(s);
    const judged = judgePower(
      meter,
      m.time.measuredAtMs,
      powerW,
      startedAtMs,
      this.conditionsOf(s),
    );
    if (!judged) {
      this.o.sessions.touch(s.id, at);
      return;
    }
    this.powerTrails.set(s.id, judged.trail);
    this.o.sessions.setPossible(s.id, judged.possibleWh, at);
    if (!this.watch.watching(s.id))
      this.watch.begin(s.id, s.limitWh, possibleWh(meter), judged.trail.fromMs);
    if (this.watch.sample(s.id, judged.possibleWh, m.receivedAtMs, stampOf(m), m.live))
      this.stopAtLimit(s.id);
  }

  /**
   * A reading that cannot be billed still says the charger is running: the model says what the
   * session may have delivered with it (null: nothing, it was measured before the last counted
   * one), and the stop is planned on that.
   */
  private doubted(
    s: MeteredSession,
    m: MeterSample,
    energyWh: number,
    doubt: Doubt,
    possible: number | null,
    at: string,
  ): void {
    this.o.log.warn(
      doubt.kind === 'implausible'
        ? { sessionId: s.id, energyWh, gainWh: doubt.gainWh, maxGainWh: doubt.maxGainWh }
        : { sessionId: s.id, energyWh, lastWh: s.lastMeterWh },
      doubt.kind === 'implausible'
        ? 'register gain above what the connector can deliver in the time: held'
        : 'meter below the last register: ignored',
    );
    if (possible === null) {
      this.o.sessions.touch(s.id, at);
      return;
    }
    this.o.sessions.setPossible(s.id, possible, at);
    if (this.watch.sample(s.id, possible, m.receivedAtMs, stampOf(m), m.live))
      this.stopAtLimit(s.id);
  }

  /** Settles the session; returns it as it was when it was drawing power (charging or stopping). */
  transactionEnded(e: TransactionEnded): Session | undefined {
    this.refusedTx.ended(e.chargerId, e.transactionRef);
    const s = this.o.sessions.byTransactionRef(e.chargerId, e.transactionRef);
    if (!s) return undefined;
    if (s.state !== 'charging' && s.state !== 'stopping') {
      // A repeat, or a stop that came after the session was settled without one: it stays
      // settled; the charger's figure is kept in its protocol's transaction table.
      this.o.log.info(
        { sessionId: s.id, meterStopWh: e.meterStopWh, state: s.state },
        'stop for a session that already has its outcome: nothing changes',
      );
      this.reconcileLateStop(s, e);
      return undefined;
    }
    killPoint('settle.before_commit');
    const delivered = this.deliveredWh(s, e.meterStopWh, e.live, e.receivedAtMs, e.time);
    if (this.settleOn(s, delivered, e.reason)) {
      // The adapter may hold this inside its own transaction for the stop message: a microtask
      // runs once that has committed, before the reply to the charger goes out.
      queueMicrotask(() => killPoint('settle.committed'));
    }
    return s;
  }

  /**
   * A stop that could not be delivered while the charger was away is sent again; a session picked
   * up after a restart gets a full start timeout from now for the charger's queued start; and the
   * charger is asked about every transaction it has open with us (it may have ended or forgotten
   * one while we could not hear it).
   */
  chargerOnline(chargerId: string): void {
    this.stops.chargerOnline(chargerId);
    for (const s of this.o.sessions.openOnCharger(chargerId)) {
      const refundReason = this.awaitingCharger.get(s.id);
      if (refundReason !== undefined) {
        this.awaitingCharger.delete(s.id);
        this.armStartTimer(s.id, this.o.startTimeoutMs, refundReason);
      }
      if (s.state === 'stopping') this.stops.stop(s.id);
      if (s.state === 'charging') this.watch.reconnected(s.id, this.o.clock.now());
      if ((s.state === 'charging' || s.state === 'stopping') && s.transactionRef)
        this.background(s.id, this.probe(s.id, s.transactionRef));
    }
  }

  /** Asks the charger about the transaction; one it says has ended settles on its last register. */
  private async probe(sessionId: string, transactionRef: string): Promise<void> {
    const s = this.o.sessions.get(sessionId);
    if (!s) return;
    const answer = await this.o.chargers.probeTransaction(
      s.chargerId,
      s.connectorId,
      transactionRef,
    );
    this.o.log.info({ sessionId, answer }, 'charger asked about the transaction');
    if (answer === 'ended') this.settleWithoutStop(sessionId, 'no_stop_charger_ended');
  }

  /**
   * A charger that rebooted may have lost its transactions (power cut, firmware that forgets):
   * it is asked about each once the boot reply has gone out (a charger takes no calls before it
   * is accepted, so the ask on reconnect came too early to see the reboot's effect). One it says
   * has ended settles on its last register; a 1.6 charger answers with its connector's status.
   */
  chargerBooted(chargerId: string): void {
    const asked: { id: string; transactionRef: string }[] = [];
    for (const s of this.o.sessions.openOnCharger(chargerId)) {
      if (s.state !== 'charging' && s.state !== 'stopping') continue;
      this.rebooted.add(s.id);
      this.unconfirmedAfterBoot.add(s.id);
      if (s.transactionRef) asked.push({ id: s.id, transactionRef: s.transactionRef });
    }
    if (asked.length === 0) return;
    setTimeout(() => {
      for (const s of asked) this.background(s.id, this.probe(s.id, s.transactionRef));
    }, 0).unref();
  }

  /**
   * A charger that shows the session's connector Available after it was in use (or after energy
   * flowed) has ended the transaction, whatever it says: its stop message gets a grace period,
   * then the session settles on the last register. A transaction a 2.0.1 station starts before
   * the cable is plugged in (TxStartPoint Authorized) is Available until then: not an end.
   * After a reboot, a status that says no transaction runs there (1.6 Preparing: the cable is
   * still in, the charger forgot the transaction) is an end too.
   */
  connectorStatus(
    chargerId: string,
    connectorId: string,
    status: ConnectorStatus,
    transactionless = false,
  ): void {
    const s = this.o.sessions.openOn(chargerId, connectorId);
    if (!s || (s.state !== 'charging' && s.state !== 'stopping')) return;
    const forgotten = transactionless && this.unconfirmedAfterBoot.has(s.id);
    if (status !== 'available' && !forgotten) {
      // A pause is not a rate: a suspended EV holds the planned stop until it charges again.
      if (status === 'suspended') this.watch.hold(s.id);
      else if (status === 'charging') this.watch.resume(s.id);
      if (!transactionless) this.unconfirmedAfterBoot.delete(s.id);
      this.seenInUse.add(s.id);
      this.timers.clearEnd('idle', s.id);
      return;
    }
    const energyFlowed = s.meterStartWh !== null && deliveredWh(trackOf(s)) > 0;
    // Available right after a reboot, before any reading: the charger forgot the transaction.
    if (!forgotten && !this.seenInUse.has(s.id) && !energyFlowed && !this.rebooted.has(s.id))
      return;
    this.timers.armEnd('idle', s.id, this.o.stopGraceMs, () =>
      this.settleWithoutStop(s.id, 'no_stop_connector_available'),
    );
  }

  /** After a restart: resolve what was half-way, resume the rest. */
  recover(): void {
    const nowMs = this.o.clock.now();
    for (const s of this.o.sessions.allOpen()) {
      switch (s.state) {
        case 'authorizing':
          // The remote start's answer died with the previous process. If the charger did accept
          // it, it reports the transaction with the session's token and the session goes on;
          // if it says nothing within the start timeout, the driver gets everything back. A
          // charger that has not reconnected yet gets the recovery wait first (chargerOnline).
          this.awaitRecovery(s.id, this.remaining(s.createdAt, nowMs), 'gateway_restarted');
          break;
        case 'authorized':
          this.awaitRecovery(
            s.id,
            this.remaining(s.authorizedAt ?? s.createdAt, nowMs),
            'ev_not_connected',
          );
          break;
        case 'charging':
          this.armSilence(
            s.id,
            Date.parse(s.lastActivityAt ?? s.createdAt) + this.o.silenceMs - nowMs,
          );
          if (s.meterStartWh === null) break; // the first sample will begin the watch
          // From when the last counted reading was taken, on the charger's clock: paired with our
          // restart time, the first reading after it (queued before the kill, or taken long after
          // that reading) measured a rate several times off (a kill then a reboot that reset the
          // register: overshot by 1.2 kWh, meter simulation).
          if (
            this.watch.begin(
              s.id,
              s.limitWh,
              possibleOf(s),
              s.meterLastAtMs ?? nowMs,
              s.meterLastAtMs === null ? null : s.meterLastStampMs,
              s.meterLastAtMs === null ? undefined : s.meterLastEpoch,
            )
          )
            this.stopAtLimit(s.id);
          // The rate it was drawing, lost with the process: without it a reading the charger cannot
          // prove (a register reset by a reboot while the gateway was down) raised the possible
          // energy by nothing, and the stop came a sample late.
          this.watch.flowBefore(s.id, averageFlowWhPerMs(s));
          break;
        case 'stopping':
          // Its stop is sent again when the charger connects to this process (chargerOnline).
          this.armSilence(
            s.id,
            Date.parse(s.lastActivityAt ?? s.createdAt) + this.o.silenceMs - nowMs,
          );
          break;
        default:
          break;
      }
    }
  }

  /** Refund no earlier than the recovery wait: the charger may be replaying a queued start. */
  private awaitRecovery(sessionId: string, remainingMs: number, reason: string): void {
    this.awaitingCharger.set(sessionId, reason);
    this.armStartTimer(sessionId, Math.max(remainingMs, this.o.recoveryWaitMs), reason);
  }

  close(): void {
    this.timers.close();
    this.refusedTx.close();
    this.stops.close();
    this.watch.endAll();
  }

  /**
   * Energy delivered by the charger's own register (meter-track.ts): a stop register below the
   * current segment (a meter that reset, a garbled value) is not trusted; the last register counts.
   * Neither is a queued one when the start register came from a live sample.
   */
  private deliveredWh(
    s: Session,
    meterStopWh: number | null,
    live: boolean,
    receivedAtMs: number,
    time: MeasuredTime,
  ): number {
    if (s.meterStartWh === null) {
      // No register was ever seen for this transaction: no energy can be proven, none is charged.
      this.o.log.warn({ sessionId: s.id, meterStopWh }, 'no start register known: settling 0 Wh');
      return 0;
    }
    const track = trackOf(s);
    if (s.meterStartSampledAt !== null && !live && meterStopWh !== null) {
      // A queued stop after a start taken from a live sample: like a queued sample, it cannot be
      // placed after that start.
      this.o.log.warn(
        { sessionId: s.id, meterStopWh },
        'start register from a live sample: queued stop register not counted, settling on the last live one',
      );
      return deliveredWh(track);
    }
    if (meterStopWh === null || meterStopWh < track.lastWh) {
      this.o.log.warn(
        { sessionId: s.id, meterStopWh, lastWh: track.lastWh },
        'stop register missing or below the last counted one: settling on the samples',
      );
    }
    const bound = {
      atMs: receivedAtMs,
      stampMs: time.stampMs,
      epoch: time.epoch,
      maxPowerW: this.o.maxPowerW(s.chargerId, s.connectorId),
    };
    const delivered = deliveredAtStop(track, meterStopWh, bound);
    if (delivered < deliveredAtStop(track, meterStopWh)) {
      this.o.log.warn(
        { sessionId: s.id, meterStopWh },
        'stop register above what the connector can deliver in the time: settling on the last counted one',
      );
    }
    return delivered;
  }

  /** Settles the session unless it already has its outcome; true when this call settled it. */
  private settleOn(s: Session, delivered: number, reason: string): boolean {
    this.watch.end(s.id);
    this.timers.clearEnds(s.id);
    this.rebooted.delete(s.id);
    this.unconfirmedAfterBoot.delete(s.id);
    this.seenInUse.delete(s.id);
    this.powerTrails.delete(s.id);
    this.startlessSince.delete(s.id);
    const at = this.now();
    // Only a session in `stopping` was asked to stop (markStopping writes both together).
    const asker = s.state === 'stopping' ? this.o.sessions.stopAsker(s.id)?.origin : undefined;
    const line = stopLineOf(reason, asker);
    // Where the charger's limit ended it, what it delivered against the paid energy.
    const gapWh = line === 'station_limit' ? delivered - s.limitWh : null;
    const settled = atomic(this.o.db, () => {
      if (!this.o.outcomes.settle(s, delivered, reason, at, { line, gapWh })) return false;
      // Energy past the paid amount is the operator's: recorded, never charged. So is energy the
      // session may have delivered beyond what its readings proved (docs/money.md). A start the
      // charger made offline is billed up to the wallet instead; only what it cannot pay is lost.
      if (s.startedOffline && this.o.taps)
        this.records.loss(s.id, this.o.taps.settleOffline(s, delivered, at), 'offline_unpaid', at);
      else this.records.loss(s.id, delivered - s.limitWh, 'beyond_paid', at);
      const possible = Math.max(s.meterPossibleWh ?? 0, delivered + s.meterGapWh);
      this.records.loss(s.id, possible - delivered, 'unproven', at);
      return true;
    });
    if (!settled) return false;
    this.stops.ended(s.id);
    this.o.log.info({ sessionId: s.id, deliveredWh: delivered, reason }, 'session settled');
    return true;
  }

  /**
   * The charger's stop for a session settled without it (no_stop_* rules): the settlement stands
   * (no second one, no money); energy the stop proves beyond what was settled is the operator's
   * loss, recorded once.
   */
  private reconcileLateStop(s: Session, e: TransactionEnded): void {
    if (s.state !== 'settled' || !s.endReason?.startsWith('no_stop_') || s.deliveredWh === null)
      return;
    if (this.records.lossWh(s.id, 'after_settlement') > 0) return;
    const proven = this.deliveredWh(s, e.meterStopWh, e.live, e.receivedAtMs, e.time);
    this.records.loss(s.id, proven - s.deliveredWh, 'after_settlement', this.now());
    if (proven > s.deliveredWh) {
      this.o.log.warn(
        { sessionId: s.id, settledWh: s.deliveredWh, provenWh: proven },
        'late stop proves energy past the fallback settlement: recorded as operator loss',
      );
    }
  }

  /** The charger never reported the end: settle on the last register it proved. */
  private settleWithoutStop(sessionId: string, reason: string): void {
    const s = this.o.sessions.get(sessionId);
    if (!s || (s.state !== 'charging' && s.state !== 'stopping')) return;
    this.o.log.warn(
      { sessionId, reason },
      'no stop from the charger: settling on the last register',
    );
    this.settleOn(s, s.meterStartWh === null ? 0 : deliveredWh(trackOf(s)), reason);
  }

  /** We heard of the session's transaction: its silence starts again. */
  private heard(sessionId: string): void {
    this.o.sessions.touch(sessionId, this.now());
    this.restartSilence(sessionId);
  }

  private restartSilence(sessionId: string): void {
    if (!this.timers.restartEnd('silence', sessionId, this.o.silenceMs)) {
      this.armSilence(sessionId, this.o.silenceMs);
    }
  }

  private armSilence(sessionId: string, delayMs: number): void {
    this.timers.armEnd('silence', sessionId, delayMs, () =>
      this.settleWithoutStop(sessionId, 'no_stop_silence'),
    );
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
    this.timers.armStart(sessionId, delayMs, () => {
      if (this.o.outcomes.refund(sessionId, reason, this.now())) {
        this.o.log.info({ sessionId, reason }, 'no transaction started in time: session refunded');
      }
    });
  }

  /**
   * An operator stops a session: a charging one becomes stopping, as at the paid energy (its
   * 'stopping' event names the operator), and settles normally when the charger reports the end.
   * The caller sends the first stop itself, to answer with the charger's own reply, and hands a
   * stop the charger refused or left unanswered to keepStopping(). A session whose charger is
   * offline is left as it is.
   */
  beginOperatorStop(sessionId: string, by: { id: string; name: string }): OperatorStop {
    const s = this.o.sessions.get(sessionId);
    if (!s) return { kind: 'not_found' };
    if ((s.state !== 'charging' && s.state !== 'stopping') || !s.transactionRef) {
      return { kind: 'not_stoppable', session: s };
    }
    // Nothing changes for a stop that cannot be sent now: the operator hears so, nothing waits.
    if (!this.o.chargers.isOnline(s.chargerId)) return { kind: 'offline', chargerId: s.chargerId };
    const at = this.now();
    atomic(this.o.db, () => {
      const asker = { origin: 'operator', operatorId: by.id, operatorName: by.name } as const;
      if (this.o.sessions.markStopping(s.id, at, asker)) {
        this.o.outcomes.event(s, 'stopping', at, { stoppedBy: 'operator', operator: by.name });
      }
    });
    this.o.log.info({ sessionId, operator: by.name }, 'operator stop: stopping');
    return { kind: 'stopping', chargerId: s.chargerId, transactionRef: s.transactionRef };
  }

  /** The stop loop of a stopping session: sent again after a pause until the charger takes it. */
  keepStopping(sessionId: string): void {
    this.stops.stop(sessionId);
  }

  /** The paid energy is reached (a reading showed it, or the planned stop's timer fired). */
  private stopAtLimit(sessionId: string): void {
    this.background(sessionId, this.stopForLimit(sessionId));
  }

  private async stopForLimit(sessionId: string): Promise<void> {
    const at = this.now();
    const s = this.o.sessions.get(sessionId);
    if (!s || s.state !== 'charging') return;
    if (!this.o.chargers.isOnline(s.chargerId)) {
      // A prediction across an outage (an EV may taper meanwhile) that the charger cannot hear:
      // its replay tells what it delivered, and the stop is planned again when it is back.
      this.watch.rearm(sessionId);
      this.o.log.info(
        { sessionId },
        'paid energy due while the charger is offline: waiting for it',
      );
      return;
    }
    const mark = () => {
      if (!this.o.sessions.markStopping(s.id, at, { origin: 'paid_energy' })) return false;
      this.o.outcomes.event(s, 'stopping', at);
      return true;
    };
    // Reached by a sample: the mark rides that sample's write, synced before its reply. Reached on
    // the planned stop's timer: in the group commit, strict, so that a stop due in a burst of
    // stops shares its fsync instead of blocking the turn on one of its own; durable, as before,
    // before the stop goes out. Not marked: settled meanwhile, or marked by a call that stops it.
    const marked = this.o.db.inTransaction
      ? atomic(this.o.db, mark)
      : await groupCommit(this.o.db).strict(mark);
    if (!marked) return;
    this.o.log.info({ sessionId }, 'paid energy reached: stopping');
    this.stops.stop(sessionId);
  }
}

/** What the session may have delivered: its proven energy, or more when doubted readings said so. */
function possibleOf(s: MeteredSession): number {
  return possibleWh(meterStateOf(s));
}

/** Why a reading moved nothing (meter-model.ts), as logged. */
const NOT_COUNTED: Record<'queued_start' | 'queued_after_live_start' | 'held_repeat', string> = {
  queued_start: 'no start register: queued sample not taken as the start',
  queued_after_live_start: 'start register from a live sample: queued sample not counted',
  held_repeat: 'held register repeated (same reading again): ignored',
};

/** What the session drew on average from its start to its last counted reading (Wh per ms). */
function averageFlowWhPerMs(s: Session): number {
  const startedMs = Date.parse(s.startedAt ?? '');
  const spanMs = (s.meterLastAtMs ?? Number.NaN) - startedMs;
  return spanMs > 0 ? deliveredWh(trackOf(s)) / spanMs : Number.NaN;
}

/** A sample on the charger's clock, as the limit watch plans from it. */
function stampOf(m: MeterSample): ChargerStamp {
  return {
    stampMs: m.time.stampMs,
    ageMs: m.receivedAtMs - m.time.measuredAtMs,
    epoch: m.time.epoch,
  };
}
