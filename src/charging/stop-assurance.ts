import type { ChargerCommands, StepOutcome } from '../ocpp/port.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/log.js';
import type { Session, SessionStore } from './session-store.js';
import type { StopRecords, StopReply, StopStep } from './stop-records.js';
import { clearUnrefTimer } from '../shared/unref-timer.js';
import { priceUp } from '../pricing/money.js';

export interface StopAssuranceOptions {
  clock: Clock;
  log: Logger;
  sessions: SessionStore;
  chargers: ChargerCommands;
  records: StopRecords;
  /** First pause before a stop is sent again; it doubles up to STOP_RETRY_MAX_MS. */
  stopRetryMs: number;
  /** The longest a charger that accepted a step gets to show it worked (see verifyMs). */
  stopVerifyMs: number;
  /** How often the charger sends a meter sample during a transaction (the interval asked for). */
  sampleIntervalMs: (chargerId: string) => number;
  /** Energy counted for the session so far (null: no register known). */
  deliveredWh: (session: Session) => number | null;
  /** Work that runs after its trigger has returned: its failure must be logged. */
  background: (sessionId: string, work: Promise<void>) => void;
}

const STOP_RETRY_MAX_MS = 60_000;
/** The shortest wait after an accepted step: a charger takes seconds to ramp down and say so. */
const STOP_VERIFY_MIN_MS = 5_000;

/**
 * The stop ladder (docs/ocpp.md "The stop is assured"): each step is sent until the charger has
 * answered it `answers` times (a reply, not a timeout), then the next one. A step the charger
 * does not implement (a CALLERROR, NotSupported) is skipped at once. An accepted step is followed
 * by a wait of two sample intervals (verifyMs): if the transaction has not ended and its energy
 * kept rising, the charger did not stop and the ladder goes on. No Reset: it would end every
 * transaction on the charger, other drivers' too; that is the operator's call.
 */
const LADDER: readonly { step: StopStep; answers: number }[] = [
  { step: 'remote_stop', answers: 3 },
  { step: 'zero_power', answers: 1 },
  { step: 'inoperative', answers: 1 },
  { step: 'unlock', answers: 1 },
];

/**
 * Sees a stopping session's transaction stopped: one loop per session walks the ladder until the
 * transaction ends, and keeps watching after a step was accepted. Every step sent is recorded
 * with its reply (stop_attempts), so the ladder survives a restart and is never walked twice.
 */
export class StopAssurance {
  /** Sessions with a stop loop running, and how to cut its pause short (charger back online). */
  private readonly loops = new Map<string, () => void>();
  /** Connectors taken out of service by the ladder, to put back once their transaction ended. */
  private readonly inoperative = new Map<string, { chargerId: string; connectorId: string }>();
  /** Sessions whose charger answered the lowered limit (lowerLimit): asked once a process. */
  private readonly lowered = new Set<string>();
  private closed = false;

  constructor(private readonly o: StopAssuranceOptions) {}

  /** Starts the stop loop of a session, or cuts its pause short if it is already running. */
  stop(sessionId: string): void {
    const wake = this.loops.get(sessionId);
    if (wake) wake();
    else this.o.background(sessionId, this.loop(sessionId));
  }

  /** The session's transaction has ended: a connector the ladder took out of service goes back. */
  ended(sessionId: string): void {
    this.lowered.delete(sessionId);
    const connector = this.inoperative.get(sessionId);
    if (connector) this.o.background(sessionId, this.restore(sessionId, connector));
  }

  /** The charger is back: connectors it could not be given back before are given back now. */
  chargerOnline(chargerId: string): void {
    for (const [sessionId, connector] of this.inoperative) {
      const s = this.o.sessions.get(sessionId);
      if (connector.chargerId === chargerId && s && s.state !== 'stopping')
        this.o.background(sessionId, this.restore(sessionId, connector));
    }
  }

  close(): void {
    this.closed = true;
    for (const wake of this.loops.values()) wake();
  }

  private async loop(sessionId: string): Promise<void> {
    let pauseMs = this.o.stopRetryMs;
    this.loops.set(sessionId, () => undefined);
    try {
      while (!this.closed) {
        const s = this.stopping(sessionId);
        if (!s) return;
        const step = this.nextStep(sessionId);
        if (!step) {
          this.o.log.error(
            { sessionId, chargerId: s.chargerId },
            'charger cannot be stopped remotely: every step of the stop ladder answered; waiting for its stop',
          );
          return;
        }
        if (!this.o.chargers.isOnline(s.chargerId)) {
          await this.pause(sessionId, pauseMs);
          pauseMs = Math.min(pauseMs * 2, STOP_RETRY_MAX_MS);
          continue;
        }
        const before = this.o.deliveredWh(s);
        const reply = await this.send(s, step);
        if (reply !== 'accepted') {
          this.o.log.warn({ sessionId, step, reply }, 'stop step not taken');
          if (step === 'remote_stop') await this.lowerLimit(s);
          await this.pause(sessionId, pauseMs);
          pauseMs = Math.min(pauseMs * 2, STOP_RETRY_MAX_MS);
          continue;
        }
        pauseMs = this.o.stopRetryMs;
        if (!(await this.keptCharging(sessionId, s.chargerId, before))) return;
        this.o.log.warn({ sessionId, step }, 'stop accepted but energy kept rising: next step');
        if (step === 'remote_stop') await this.lowerLimit(s);
      }
    } finally {
      this.loops.delete(sessionId);
    }
  }

  /**
   * After an accepted step: waits until the transaction ends (false) or its energy rises past
   * where it stood when the step was sent (true). Energy that does not move is a charger that
   * stopped but has not said so yet: the connector-Available grace and the silence settle it.
   */
  private async keptCharging(
    sessionId: string,
    chargerId: string,
    before: number | null,
  ): Promise<boolean> {
    while (!this.closed) {
      await this.pause(sessionId, this.verifyMs(chargerId));
      const s = this.stopping(sessionId);
      if (!s) return false;
      const now = this.o.deliveredWh(s);
      if (now !== null && now > (before ?? 0)) return true;
    }
    return false;
  }

  /**
   * Two of the charger's sample intervals: whatever the phase of its sampling, a sample taken
   * after the step has arrived by then (a fixed minute let a 150 kW charger that ignores the stop
   * deliver 2.5 kWh first). At least STOP_VERIFY_MIN_MS, at most `stopVerifyMs`. A charger that
   * samples more rarely than asked shows no new energy yet, and is simply checked again.
   */
  private verifyMs(chargerId: string): number {
    const twoSamples = 2 * this.o.sampleIntervalMs(chargerId);
    return Math.min(this.o.stopVerifyMs, Math.max(STOP_VERIFY_MIN_MS, twoSamples));
  }

  private stopping(sessionId: string): Session | undefined {
    const s = this.o.sessions.get(sessionId);
    return s?.state === 'stopping' && s.transactionRef ? s : undefined;
  }

  /** The first step the charger has not yet answered enough times, or refused as unsupported. */
  private nextStep(sessionId: string): StopStep | undefined {
    const answered = new Map<StopStep, StopReply[]>();
    for (const a of this.o.records.attempts(sessionId)) {
      if (a.reply === 'no_answer') continue;
      answered.set(a.step, [...(answered.get(a.step) ?? []), a.reply]);
    }
    return LADDER.find(({ step, answers }) => {
      const replies = answered.get(step) ?? [];
      return replies.length < answers && !replies.includes('not_supported');
    })?.step;
  }

  /**
   * The charger refused or ignored a stop: where it holds the session's limit itself (OCPP 2.1),
   * that limit is lowered to the energy the session may have delivered so far, so that the
   * charger ends the transaction at its own limit (and keeps it there with its link down). Sent
   * after the first stop that did not work and before the zero power profile, which the ladder
   * still sends if energy keeps rising; not a step of its own (stop_attempts): its answer is
   * logged. A charger without such a limit says not_supported and nothing is sent.
   */
  private async lowerLimit(s: Session): Promise<void> {
    if (this.lowered.has(s.id) || !this.o.chargers.isOnline(s.chargerId)) return;
    const energyWh = Math.min(s.limitWh, Math.max(0, this.o.deliveredWh(s) ?? 0));
    const costNgn = Math.min(s.amount, priceUp(energyWh, s.microNgnPerWh));
    try {
      const reply = await this.o.chargers.setTransactionLimit(
        s.chargerId,
        s.transactionRef as string,
        { energyWh, costNgn },
      );
      this.lowered.add(s.id);
      if (reply !== 'not_supported')
        this.o.log.info({ sessionId: s.id, energyWh, reply }, "charger's own limit lowered");
    } catch (err) {
      this.o.log.warn({ sessionId: s.id, err: (err as Error).message }, 'limit not delivered');
    }
  }

  private async send(s: Session, step: StopStep): Promise<StopReply> {
    const sentAt = new Date(this.o.clock.now()).toISOString();
    let reply: StopReply;
    try {
      reply = await this.command(s, step);
    } catch (err) {
      this.o.log.warn({ sessionId: s.id, step, err: (err as Error).message }, 'stop not delivered');
      reply = 'no_answer';
    }
    this.o.records.attempt(s.id, step, sentAt, reply);
    if (step === 'inoperative' && reply === 'accepted')
      this.inoperative.set(s.id, { chargerId: s.chargerId, connectorId: s.connectorId });
    return reply;
  }

  private command(s: Session, step: StopStep): Promise<StepOutcome> {
    const { chargers } = this.o;
    const ref = s.transactionRef as string;
    switch (step) {
      case 'remote_stop':
        return chargers.requestStop(s.chargerId, ref);
      case 'zero_power':
        return chargers.limitToZero(s.chargerId, s.connectorId, ref);
      case 'inoperative':
        return chargers.setAvailability(s.chargerId, s.connectorId, false);
      case 'unlock':
        return chargers.unlockConnector(s.chargerId, s.connectorId);
    }
  }

  private async restore(
    sessionId: string,
    connector: { chargerId: string; connectorId: string },
  ): Promise<void> {
    if (!this.o.chargers.isOnline(connector.chargerId)) return;
    const reply = await this.o.chargers.setAvailability(
      connector.chargerId,
      connector.connectorId,
      true,
    );
    this.inoperative.delete(sessionId);
    this.o.log.info({ sessionId, ...connector, reply }, 'connector put back in service');
  }

  private pause(sessionId: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      function done() {
        clearUnrefTimer(timer);
        resolve();
      }
      this.loops.set(sessionId, done);
    });
  }
}
