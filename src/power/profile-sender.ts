import type { PowerLimitOutcome } from '../ocpp/port.js';
import {
  connectorKey,
  type ActiveSession,
  type LoadManagerOptions,
  type ManagedConnector,
} from './power-model.js';
import type { PowerState } from './power-state.js';

/** What the sender tells the manager. */
export interface SenderHooks {
  /** A charger accepted a session's new allowance. */
  accepted(sessionId: string): void;
  /** A charger was found refusing profiles: one more round. */
  refusedFound(): void;
}

/**
 * Sends the allowances as charging profiles (a session's TxProfile, a connector's
 * TxDefaultProfile) and keeps what each charger accepted; a charger that refuses them is from
 * then counted at its maximum.
 */
export class ProfileSender {
  constructor(
    private readonly state: PowerState,
    private readonly o: LoadManagerOptions,
    private readonly hooks: SenderHooks,
  ) {}

  /**
   * Lifts a profile that a charger now counted at its maximum accepted before; not tried again
   * when it is not accepted (a refusing charger's answers say little).
   */
  async lift(s: ActiveSession, c: ManagedConnector, watts: number): Promise<void> {
    if (!(await this.send(s, c, watts))) {
      this.state.confirmed.delete(s.sessionId);
      this.state.allowances.set(s.sessionId, null, this.state.now());
    }
  }

  /** Sends one connector's TxDefaultProfile; true when the charger accepted it. */
  async sendDefault(c: ManagedConnector, watts: number): Promise<boolean> {
    const k = connectorKey(c.chargerId, c.connectorId);
    const outcome = await this.limit(c.chargerId, c.connectorId, {
      watts,
      ...(c.phases ? { phases: c.phases } : {}),
    });
    if (outcome === 'accepted') {
      this.state.defaults.set(k, watts);
      return true;
    }
    // Not answered: it still counts at the default it accepted before (the higher one, on a lower).
    if (outcome === 'rejected' || outcome === 'not_supported') {
      this.state.defaults.delete(k);
      this.refused(c.chargerId, outcome);
    }
    return false;
  }

  /** Sends one TxProfile; true when the charger accepted it. */
  async send(s: ActiveSession, c: ManagedConnector, watts: number): Promise<boolean> {
    const outcome = await this.limit(s.chargerId, s.connectorId, {
      watts,
      transactionRef: s.transactionRef,
      ...(c.phases ? { phases: c.phases } : {}),
    });
    if (outcome === 'accepted') {
      this.state.confirmed.set(s.sessionId, watts);
      this.state.unsure.delete(s.sessionId);
      this.state.allowances.set(s.sessionId, watts, this.state.now());
      this.hooks.accepted(s.sessionId);
      return true;
    }
    if (outcome === 'no_transaction') {
      // Its transaction ended (or moved) under the round: nothing to hold, nothing to try again;
      // it counts as before until its end's round.
      this.o.log.info(
        { sessionId: s.sessionId, chargerId: s.chargerId, connectorId: s.connectorId, watts },
        'no TxProfile sent: the transaction is not running on the connector',
      );
      return true;
    }
    // A charger that took its connectors' default profile does smart charging: a refused TxProfile
    // is about the transaction (its id not yet known there, say), tried again; one that took
    // neither refuses profiles altogether.
    const takesDefaults = this.o
      .connectors()
      .some(
        (x) =>
          x.chargerId === s.chargerId &&
          this.state.defaults.has(connectorKey(x.chargerId, x.connectorId)),
      );
    if (outcome === 'not_supported' || (outcome === 'rejected' && !takesDefaults)) {
      this.refused(s.chargerId, outcome);
    }
    return false;
  }

  async limit(
    chargerId: string,
    connectorId: string,
    limit: { watts: number; transactionRef?: string; phases?: 1 | 3 },
  ): Promise<PowerLimitOutcome | 'failed'> {
    try {
      return await this.o.chargers.setPowerLimit(chargerId, connectorId, limit);
    } catch (err) {
      this.o.log.warn(
        { chargerId, connectorId, watts: limit.watts, err: (err as Error).message },
        'power limit not delivered: the connector keeps counting at its previous allowance',
      );
      return 'failed';
    }
  }

  refused(chargerId: string, outcome: string): void {
    if (this.state.refusing.has(chargerId)) return;
    this.state.refusing.add(chargerId);
    this.o.counters?.refusal(chargerId);
    this.o.log.warn(
      { chargerId, outcome },
      'charger refuses charging profiles: counted at its maximum, the others share the rest',
    );
    this.hooks.refusedFound();
  }
}
