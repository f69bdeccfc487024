import type { SiteConnector, SiteDirectory } from '../config/site.js';
import type { Driver } from '../fleet/roster.js';
import type { TelematicsSoc } from '../fleet/telematics.js';
import { ChargerOfflineError, ChargerTimeoutError, type ChargerCommands } from '../ocpp/port.js';
import { paidEnergyWh } from '../pricing/money.js';
import { quoteFullCharge } from '../pricing/quote.js';
import type { TariffBook, TariffPrice } from '../config/tariff-book.js';
import type { Clock } from '../shared/clock.js';
import { isArmed, killPoint } from '../shared/kill-points.js';
import type { Logger } from '../shared/log.js';
import type { Db } from '../store/database.js';
import { groupCommit } from '../store/group-commit.js';
import { InsufficientBalanceError, WalletNotFoundError, type Wallet } from '../wallet/wallet.js';
import { ChargingError, isUniqueViolation } from './errors.js';
import { requestHash, type IdempotencyKeys, type IdempotencyRecord } from './idempotency.js';
import { newIdToken, newSessionId } from './id-tokens.js';
import type { SessionLifecycle } from './lifecycle.js';
import type { SessionOutcomes } from './outcomes.js';
import { QuoteReads, type OpenSessionRef, type QuoteDriver } from './quote-reads.js';
import type { SessionStore } from './session-store.js';

export interface ChargingSettings {
  maxAmount: number;
  efficiencyPercent: number;
  defaultVehicle: { model: string; batteryWh: number };
  /** A telematics SoC older than this is not quoted on. */
  telematicsMaxAgeMs: number;
}

export interface Quote {
  fleetDriver: boolean;
  quotedAmount: number;
  currency: 'NGN';
  subWalletBalance: number;
  socPercent: number;
  vehicleModel: string;
  /**
   * Where socPercent came from: the charger, else the fleet's telematics (uplink), or nowhere
   * (then the whole battery is quoted).
   */
  socSource: 'charger' | 'telematics' | 'unknown';
  socReportedAt: string | null;
  energyWh: number;
  pricePerKwh: number;
  /**
   * Until when pricePerKwh holds (the next time-of-day change of the connector's tariff); null: it
   * does not change. A session pays the price in force at its Start for all its energy.
   */
  priceValidUntil: string | null;
}

export interface StartedSession {
  sessionId: string;
  debited: number;
  remainingBalance: number;
}

export interface ChargingDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  site: SiteDirectory;
  tariffs: TariffBook;
  wallet: Wallet;
  sessions: SessionStore;
  idempotency: IdempotencyKeys;
  outcomes: SessionOutcomes;
  lifecycle: SessionLifecycle;
  chargers: ChargerCommands;
  settings: ChargingSettings;
}

/** The balance read with the driver; a driver without a wallet fails as Wallet.balance() does. */
function walletBalance(driverId: string, balance: number | null): number {
  if (balance === null) throw new WalletNotFoundError(`no wallet for driver ${driverId}`);
  return balance;
}

/** Statuses in which a connector can take a new session. */
const FREE = new Set(['available', 'occupied', 'unknown']);

/** The two driver operations: quote (moves no money) and start (debit, then remote start). */
export class Charging {
  /** Why new Starts are refused (the gateway is draining for a stop); null: they are taken. */
  private startsRefused: string | null = null;

  private readonly quoteReads: QuoteReads;

  constructor(private readonly deps: ChargingDeps) {
    this.quoteReads = new QuoteReads(deps.db);
  }

  /** Refuse new Starts with `gateway_draining` and this reason; null takes them again. */
  refuseStarts(reason: string | null): void {
    this.startsRefused = reason;
  }

  /**
   * The driver as a quote on this connector needs it, with the session open there (one read);
   * undefined when no such driver.
   */
  quoteDriver(driverId: string, chargerId: string, connectorId: string): QuoteDriver | undefined {
    return this.quoteReads.read(driverId, chargerId, connectorId);
  }

  /** `found` must come from quoteDriver() for the same charger and connector. */
  quote(
    { driver, balance, telematics, openSession }: QuoteDriver,
    chargerId: string,
    connectorId: string,
  ): Quote {
    const connector = this.usableConnector(chargerId, connectorId, driver.id, openSession);
    return this.quoteAt(connector, { driver, balance, telematics });
  }

  /**
   * The full quote for the vehicle plugged at a connector a tap is starting on (taps.ts): the
   * same figures as quote(), without its checks that the connector is free.
   */
  tapQuote(driverId: string, chargerId: string, connectorId: string): number | null {
    const connector = this.deps.site.connector(chargerId, connectorId);
    const found = this.quoteReads.read(driverId, chargerId, connectorId);
    if (
      !connector ||
      !found ||
      !this.deps.tariffs.priceAt(connector.tariffId, this.deps.clock.now())
    )
      return null;
    return this.quoteAt(connector, found).quotedAmount;
  }

  private quoteAt(
    connector: SiteConnector,
    { driver, balance, telematics }: Omit<QuoteDriver, 'openSession'>,
  ): Quote {
    const view = this.deps.chargers.connector(connector.chargerId, connector.id);
    const assigned =
      driver.vehicleModel && driver.vehicleBatteryWh
        ? { model: driver.vehicleModel, batteryWh: driver.vehicleBatteryWh }
        : this.deps.settings.defaultVehicle;
    // A charger that talks to the EV (ISO 15118) knows the real battery; it names no model.
    const vehicle = { ...assigned, batteryWh: view.batteryWh ?? assigned.batteryWh };
    const soc = this.socFor(telematics, view.socPercent, view.socAt);
    const price = this.priceNow(connector);
    const figures = quoteFullCharge({
      vehicle,
      socPercent: soc.percent,
      microNgnPerWh: price.microNgnPerWh,
      efficiencyPercent: this.deps.settings.efficiencyPercent,
    });
    return {
      fleetDriver: driver.active,
      quotedAmount: figures.amount,
      currency: 'NGN',
      subWalletBalance: walletBalance(driver.id, balance),
      socPercent: figures.socPercent,
      vehicleModel: vehicle.model,
      socSource: soc.source,
      socReportedAt: soc.at,
      energyWh: figures.energyWh,
      pricePerKwh: price.microNgnPerWh / 1000,
      priceValidUntil: price.untilMs === null ? null : new Date(price.untilMs).toISOString(),
    };
  }

  /**
   * Debits and remote-starts. With an idempotency key, a Start already made with that key (by this
   * driver) is not made again: its outcome is answered instead, from the session it debited.
   */
  async start(
    driver: Driver,
    chargerId: string,
    connectorId: string,
    amount: number,
    idempotencyKey?: string,
  ): Promise<StartedSession> {
    const { deps } = this;
    const key =
      idempotencyKey === undefined
        ? undefined
        : { key: idempotencyKey, hash: requestHash({ chargerId, connectorId, amount }) };
    // Before any other check: the first attempt's session occupies the connector, and a retry
    // must hear what the first attempt got, not connector_unavailable.
    const prior = key && deps.idempotency.find(driver.id, key.key);
    if (key && prior) return this.replay(key.key, key.hash, prior);
    // After the replay: a retry of a Start made before the drain still hears its outcome.
    if (this.startsRefused !== null) {
      throw new ChargingError('gateway_draining', this.startsRefused);
    }

    if (!driver.active) {
      throw new ChargingError('driver_not_found', `${driver.email} is not an active fleet driver`);
    }
    const connector = this.usableConnector(chargerId, connectorId, driver.id);
    // Paid energy is enforced by stopping on the live register: a charger that said it sends no
    // energy during a transaction cannot be held to it, so nothing is debited.
    if (deps.chargers.meteringCapability(chargerId) === 'none') {
      throw new ChargingError(
        'charger_unmetered',
        `charger ${chargerId} reports no energy during a transaction; it cannot be held to a paid amount`,
      );
    }
    // Nor can one that does not yet sample its energy during a transaction as the stop needs.
    const gap = deps.chargers.samplingGap(chargerId);
    if (gap !== null) {
      throw new ChargingError(
        'charger_unmetered',
        `charger ${chargerId}: ${gap}; it cannot be held to a paid amount until it samples as asked`,
      );
    }
    if (!Number.isSafeInteger(amount) || amount < 1 || amount > deps.settings.maxAmount) {
      throw new ChargingError(
        'invalid_amount',
        `amount must be a whole number of NGN from 1 to ${deps.settings.maxAmount}`,
      );
    }
    // The price in force now is the session's for all its energy, whatever window comes next.
    const price = this.priceNow(connector);
    const limitWh = paidEnergyWh(amount, price.microNgnPerWh);
    if (limitWh < 1) {
      throw new ChargingError(
        'invalid_amount',
        `${amount} NGN buys less than 1 Wh at this connector`,
      );
    }

    const at = new Date(deps.clock.now()).toISOString();
    const sessionId = newSessionId();
    const idToken = newIdToken();
    killPoint('start.before_debit');
    let debit: number;
    try {
      debit = await this.debit(
        driver,
        connector,
        { amount, price, limitWh },
        sessionId,
        idToken,
        at,
        key,
      );
    } catch (err) {
      // A retry handed in the same turn as its first attempt (group commit) lost to it inside the
      // batch: it hears the first attempt's outcome, as a retry a moment later would.
      const first =
        key && err instanceof ChargingError && deps.idempotency.find(driver.id, key.key);
      if (key && first) return this.replay(key.key, key.hash, first);
      throw err;
    }
    deps.log.info(
      { sessionId, chargerId, connectorId, amount, limitWh },
      'session debited, starting charger',
    );
    killPoint('start.debit_committed');

    try {
      const answer = deps.chargers.requestStart({
        chargerId,
        connectorId: connector.id,
        idToken,
      });
      if (isArmed('start.remote_start_sent')) {
        // The call goes out within the microtasks above; one macrotask later it is on the wire.
        await new Promise((r) => setImmediate(r));
        killPoint('start.remote_start_sent');
      }
      const outcome = await answer;
      killPoint('start.remote_start_answered');
      if (outcome === 'accepted') {
        await deps.lifecycle.remoteStartAccepted(sessionId);
      } else {
        this.refundUnlessStarted(sessionId, 'charger_rejected', chargerId, connectorId);
      }
    } catch (err) {
      if (err instanceof ChargingError) throw err;
      const offline = err instanceof ChargerOfflineError;
      if (!offline && !(err instanceof ChargerTimeoutError)) throw err;
      this.refundUnlessStarted(
        sessionId,
        offline ? 'charger_offline' : 'charger_timeout',
        chargerId,
        connectorId,
      );
    }
    killPoint('start.before_response');
    return { sessionId, debited: amount, remainingBalance: debit };
  }

  /**
   * The answer to a Start repeated with a key already used: the first attempt's outcome, derived
   * from its session, so it is the same before and after a restart and needs no second write.
   */
  private replay(key: string, hash: string, prior: IdempotencyRecord): StartedSession {
    const { deps } = this;
    if (prior.requestHash !== hash) {
      throw new ChargingError(
        'idempotency_key_reused',
        `Idempotency-Key ${key} was already used for a different request`,
      );
    }
    const session = deps.sessions.get(prior.sessionId);
    const debit = deps.wallet.sessionDebit(prior.sessionId);
    if (!session || !debit) throw new Error(`idempotency key ${key} names no debited session`);
    // Accepted by the charger (or started by it even though its answer was lost): a success,
    // whatever happened to the session since.
    const accepted =
      session.authorizedAt !== null ||
      session.state === 'charging' ||
      session.state === 'stopping' ||
      session.state === 'settled';
    if (accepted) {
      return {
        sessionId: session.id,
        debited: debit.amount,
        remainingBalance: debit.balanceAfter,
      };
    }
    if (session.state === 'authorizing') {
      throw new ChargingError(
        'idempotency_key_in_progress',
        `the first request with Idempotency-Key ${key} is still waiting for charger ${session.chargerId}; retry shortly`,
      );
    }
    throw startFailure(failureCode(session.endReason), session.chargerId, session.connectorId);
  }

  private priceNow(connector: SiteConnector): TariffPrice {
    const price = this.deps.tariffs.priceAt(connector.tariffId, this.deps.clock.now());
    if (!price) {
      throw new ChargingError(
        'connector_unavailable',
        `connector ${connector.id} on charger ${connector.chargerId} has no tariff ${connector.tariffId}`,
      );
    }
    return price;
  }

  /** The charger's reading first; else a fresh enough telematics reading; else none. */
  private socFor(
    t: TelematicsSoc | undefined,
    chargerSoc: number | null,
    chargerAt: string | null,
  ): { percent: number | undefined; source: Quote['socSource']; at: string | null } {
    if (chargerSoc !== null) return { percent: chargerSoc, source: 'charger', at: chargerAt };
    const ageMs = t ? this.deps.clock.now() - Date.parse(t.measuredAt) : Infinity;
    if (t && ageMs <= this.deps.settings.telematicsMaxAgeMs) {
      return { percent: t.socPercent, source: 'telematics', at: t.measuredAt };
    }
    return { percent: undefined, source: 'unknown', at: null };
  }

  /**
   * Resolves the connector and refuses early, before any money moves, when it cannot start now.
   * `open`: the session open on it if the caller has just read it (null: none), else read here.
   */
  private usableConnector(
    chargerId: string,
    connectorId: string,
    driverId: string,
    open?: OpenSessionRef | null,
  ): SiteConnector {
    const { deps } = this;
    if (!deps.site.charger(chargerId)) {
      throw new ChargingError('charger_not_found', `no charger with id ${chargerId}`);
    }
    const connector = deps.site.connector(chargerId, connectorId);
    if (!connector) {
      throw new ChargingError(
        'connector_not_found',
        `charger ${chargerId} has no connector ${connectorId}`,
      );
    }
    if (!deps.chargers.isOnline(chargerId)) {
      throw new ChargingError('charger_offline', `charger ${chargerId} is offline`);
    }
    // An open session first: its own driver is told which one (to follow or wait for it).
    const holder = open === undefined ? deps.sessions.openOn(chargerId, connector.id) : open;
    if (holder) throw this.occupied(connector, driverId, holder);
    const hold = deps.chargers.operatorHold(chargerId, connector.id);
    if (hold !== null) throw new ChargingError('connector_unavailable', hold);
    const view = deps.chargers.connector(chargerId, connector.id);
    if (!FREE.has(view.status)) {
      throw new ChargingError(
        'connector_unavailable',
        view.status === 'finishing'
          ? // OCPP 1.6 Finishing: the last transaction has ended, the connector is not free again
            // until the EV is unplugged or presented again (Preparing / Available).
            `connector ${connectorId} on charger ${chargerId} is finishing its last transaction: unplug the EV and plug it in again`
          : `connector ${connectorId} on charger ${chargerId} is ${view.status}`,
      );
    }
    return connector;
  }

  /** connector_unavailable because of an open session; named only to the driver who owns it. */
  private occupied(
    connector: SiteConnector,
    driverId: string,
    known?: OpenSessionRef,
  ): ChargingError {
    const open = known ?? this.deps.sessions.openOn(connector.chargerId, connector.id);
    const where = `connector ${connector.id} on charger ${connector.chargerId}`;
    return new ChargingError(
      'connector_unavailable',
      open && open.driverId === driverId
        ? `${where} already has your open session ${open.id}`
        : `${where} already has a session`,
    );
  }

  /**
   * One transaction (in the group commit: answered once durable): session row, debit with its
   * ledger entry, outbox event. Returns the new balance.
   */
  private async debit(
    driver: Driver,
    connector: SiteConnector,
    { amount, price, limitWh }: { amount: number; price: TariffPrice; limitWh: number },
    sessionId: string,
    idToken: string,
    at: string,
    key?: { key: string; hash: string },
  ): Promise<number> {
    const { deps } = this;
    try {
      return await groupCommit(deps.db).strict(() => {
        deps.sessions.insert({
          id: sessionId,
          driverId: driver.id,
          chargerId: connector.chargerId,
          connectorId: connector.id,
          amount,
          microNgnPerWh: price.microNgnPerWh,
          limitWh,
          idToken,
          createdAt: at,
          tariff: { id: price.tariffId, version: price.version, window: price.window },
        });
        const entry = deps.wallet.debitSession(driver.id, sessionId, amount, at);
        if (key) deps.idempotency.record(driver.id, key.key, key.hash, sessionId, at);
        killPoint('start.debit_uncommitted');
        deps.outcomes.event(
          {
            id: sessionId,
            driverId: driver.id,
            chargerId: connector.chargerId,
            connectorId: connector.id,
            amount,
          },
          'authorizing',
          at,
          { limitWh },
        );
        return entry.balanceAfter;
      });
    } catch (err) {
      if (err instanceof InsufficientBalanceError) {
        throw new ChargingError(
          'insufficient_balance',
          `sub-wallet balance ${err.balance} NGN is less than the requested ${amount} NGN`,
        );
      }
      if (isUniqueViolation(err)) throw this.occupied(connector, driver.id);
      throw err;
    }
  }

  private refundUnlessStarted(
    sessionId: string,
    code: StartFailureCode,
    chargerId: string,
    connectorId: string,
  ): void {
    const refunded = this.deps.outcomes.refund(
      sessionId,
      code,
      new Date(this.deps.clock.now()).toISOString(),
    );
    const state = this.deps.sessions.get(sessionId)?.state;
    // The charger may have started the transaction even though its answer was lost or negative:
    // then the session is live and paid for, and the caller gets its success response.
    const started = state === 'charging' || state === 'stopping' || state === 'settled';
    if (refunded || !started) {
      this.deps.log.warn({ sessionId, reason: code }, 'remote start failed, session refunded');
      throw startFailure(code, chargerId, connectorId);
    }
  }
}

type StartFailureCode = 'charger_rejected' | 'charger_timeout' | 'charger_offline';

/** The error of a remote start that failed and was refunded; the same words on a replay. */
function startFailure(
  code: StartFailureCode,
  chargerId: string,
  connectorId: string,
): ChargingError {
  const message = {
    charger_rejected: `charger ${chargerId} refused to start connector ${connectorId}; nothing was charged`,
    charger_offline: `charger ${chargerId} went offline; nothing was charged`,
    charger_timeout: `charger ${chargerId} did not answer the start request; nothing was charged`,
  }[code];
  return new ChargingError(code, message);
}

/**
 * A refund reason as the caller's error. `gateway_restarted` (the answer died with the previous
 * process and the charger never reported the transaction) reads as an unanswered start.
 */
function failureCode(reason: string | null): StartFailureCode {
  return reason === 'charger_rejected' || reason === 'charger_offline' ? reason : 'charger_timeout';
}
