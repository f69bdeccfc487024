import type {
  ChargerEvents,
  ConnectorStatus,
  MeterSample,
  StationCost,
  TokenVerdict,
  TransactionEnded,
  TransactionStarted,
} from '../ocpp/port.js';
import type { Session } from './session-store.js';

/**
 * Told what happened after the lifecycle decided: read-only, it answers nothing and cannot change
 * the decision. Authorize is not told (nothing listens to it).
 */
export interface ChargerEventListener {
  /** `verdict`: what the lifecycle answered the charger. */
  transactionStarted?(event: TransactionStarted, verdict: TokenVerdict): void;
  meterSample?(sample: MeterSample): void;
  /**
   * `drawing`: the session that was drawing power (charging or stopping) when the end came, as it
   * was before the lifecycle settled it; undefined for an unknown or already settled transaction.
   */
  transactionEnded?(event: TransactionEnded, drawing: Session | undefined): void;
  chargerOnline?(chargerId: string): void;
  chargerBooted?(chargerId: string): void;
  connectorStatus?(
    chargerId: string,
    connectorId: string,
    status: ConnectorStatus,
    transactionless?: boolean,
  ): void;
}

export interface VerdictMessages {
  withMessage(verdict: TokenVerdict, chargerId: string, idToken: string): TokenVerdict;
}

/** The charger port's events as the lifecycle answers them, an end saying which session it ended. */
export interface ChargerEventDecider extends ChargerEvents {
  transactionEnded(event: TransactionEnded): Session | undefined;
}

/**
 * The one path of charger events: the adapters hand each event here, the lifecycle decides (and
 * answers Authorize and StartTransaction), then every listener hears it in the order given. A
 * listener that throws stops the ones after it, as the lifecycle throwing stops them all.
 */
export class ChargerEventDispatcher implements ChargerEvents {
  constructor(
    private readonly decider: ChargerEventDecider,
    private readonly listeners: readonly ChargerEventListener[],
    /** Adds the driver's message to an accepted token's verdict (screen-notes.ts). */
    private readonly screen?: VerdictMessages,
  ) {}

  authorize(chargerId: string, idToken: string, connectorId: string | null): TokenVerdict {
    const verdict = this.decider.authorize(chargerId, idToken, connectorId);
    return this.screen ? this.screen.withMessage(verdict, chargerId, idToken) : verdict;
  }

  transactionStarted(event: TransactionStarted): TokenVerdict {
    const verdict = this.decider.transactionStarted(event);
    for (const l of this.listeners) l.transactionStarted?.(event, verdict);
    return verdict;
  }

  meterSample(sample: MeterSample): void {
    this.decider.meterSample(sample);
    for (const l of this.listeners) l.meterSample?.(sample);
  }

  /** Compared by the lifecycle alone (station-costs.ts): no listener reads a charger's cost. */
  stationCost(cost: StationCost): void {
    this.decider.stationCost?.(cost);
  }

  transactionEnded(event: TransactionEnded): void {
    const drawing = this.decider.transactionEnded(event);
    for (const l of this.listeners) l.transactionEnded?.(event, drawing);
  }

  chargerOnline(chargerId: string): void {
    this.decider.chargerOnline(chargerId);
    for (const l of this.listeners) l.chargerOnline?.(chargerId);
  }

  chargerBooted(chargerId: string): void {
    this.decider.chargerBooted(chargerId);
    for (const l of this.listeners) l.chargerBooted?.(chargerId);
  }

  connectorStatus(
    chargerId: string,
    connectorId: string,
    status: ConnectorStatus,
    transactionless?: boolean,
  ): void {
    this.decider.connectorStatus(chargerId, connectorId, status, transactionless);
    for (const l of this.listeners)
      l.connectorStatus?.(chargerId, connectorId, status, transactionless);
  }
}
