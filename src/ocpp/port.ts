/**
 * The version-neutral charger port. The charging layer talks to chargers only through
 * `ChargerCommands` and hears from them only through `ChargerEvents`; OCPP 1.6J and 2.0.1 detail
 * (message names, id types, transaction id schemes) stays inside the adapters.
 */

export type ConnectorStatus =
  | 'available'
  | 'occupied' // EV plugged, no energy flowing yet (1.6 Preparing)
  | 'charging'
  | 'suspended' // SuspendedEV / SuspendedEVSE
  | 'finishing'
  | 'reserved'
  | 'unavailable'
  | 'faulted'
  | 'unknown';

export interface ConnectorView {
  chargerId: string;
  connectorId: string;
  status: ConnectorStatus;
  errorCode: string | null;
  socPercent: number | null;
  socAt: string | null;
  /** Battery capacity the charger reported for the plugged-in vehicle (ISO 15118), in Wh. */
  batteryWh: number | null;
}

export type CommandOutcome = 'accepted' | 'rejected';
/** A command the charger may not implement: 'not_supported' is a CALLERROR or a NotSupported. */
export type StepOutcome = CommandOutcome | 'not_supported';
/**
 * A power limit's outcome: 'no_transaction' when it named a transaction the charger is not running
 * on that connector as far as its messages told (ended, on another connector, never heard of):
 * nothing was sent, since a charger must refuse such a TxProfile (1.6 3.13.2, 2.0.1 K01).
 */
export type PowerLimitOutcome = StepOutcome | 'no_transaction';
/**
 * What a charger says of a transaction when asked after a restart or reconnect: 'ended' only when
 * it says so outright (2.0.1 GetTransactionStatus: not ongoing, nothing queued); 'asked' when it
 * was asked to report again (status, meter values) and its answer comes as ordinary messages.
 */
export type TransactionProbe = 'ongoing' | 'ended' | 'asked' | 'unknown';

/** The charger has no live connection. */
export class ChargerOfflineError extends Error {}
/** The charger did not answer in time (or the link dropped while waiting). */
export class ChargerTimeoutError extends Error {}
/** The command cannot be said in this charger's protocol (e.g. a 1.6 key name to a 2.0.1 station); nothing was sent. */
export class UnsayableCommandError extends Error {}

export interface StartRequest {
  chargerId: string;
  connectorId: string;
  /** One-time token that the charger echoes back when the transaction starts (<= 20 chars). */
  idToken: string;
}

/** What the gateway needs a charger to do on its own, whatever its protocol calls it. */
export interface ChargerSettings {
  /** How often to sample the meter during a transaction (the paid-energy stop depends on it). */
  meterSampleIntervalSeconds: number;
  /**
   * How long the charger waits for the EV after a remote start: the gateway's start timeout less
   * a margin, so the charger gives up first and an EV plugged in after the refund cannot start.
   */
  connectionTimeoutSeconds: number;
}

/**
 * What energy a charger reports during a transaction, as it said when read back after
 * configuration: its register, only interval energy (summed by the adapter into a register), no
 * energy at all (it cannot be held to a paid amount), or not known (never read back).
 */
export type MeteringCapability = 'register' | 'interval' | 'none' | 'unknown';

/**
 * A connector's power ceiling as the load manager asks for it. `watts` null clears it; `phases`
 * (AC, default 3) converts watts to amperes for chargers that only take a current limit.
 */
export interface PowerLimit {
  watts: number | null;
  transactionRef?: string;
  phases?: 1 | 3;
}

/**
 * What the charging side tells a driver at the charger's screen, in money and words; each adapter
 * decides how its protocol says it, and says nothing to a charger that cannot show it.
 * Amounts are whole NGN; `text` is short English.
 * - `paid`: the session is paid and started (or about to): what was debited, the wallet after it;
 * - `running`: the cost so far of the energy delivered (`registerWh`: the charger's register);
 * - `final`: the settled cost, what went back to the wallet.
 */
export type ScreenNote =
  | (ScreenBase & { kind: 'paid'; idToken: string; paidNgn: number; walletNgn: number })
  | (ScreenBase & {
      kind: 'running';
      costNgn: number;
      paidNgn: number;
      registerWh: number | null;
      timestamp: string;
    })
  | (ScreenBase & { kind: 'final'; costNgn: number; creditedNgn: number; walletNgn: number });

interface ScreenBase {
  chargerId: string;
  connectorId: string;
  transactionRef: string;
  /** The session's price, NGN per kWh (the 1.6 running cost's `chargingPrice`). */
  ngnPerKwh: number;
  energyWh: number;
  text: string;
}

/**
 * What became of a screen note: `sent` (and taken), `answer` (it rides on the answer the charger
 * is waiting for), `unsupported` (the charger cannot show it: nothing sent), `refused` (it said no
 * or failed: not sent again until it boots), `offline`.
 */
export type ScreenOutcome = 'sent' | 'answer' | 'unsupported' | 'refused' | 'offline';

export interface ChargerCommands {
  isOnline(chargerId: string): boolean;
  /** Shows a note on the charger's screen where it can (never throws). */
  showOnScreen(note: ScreenNote): Promise<ScreenOutcome>;
  /**
   * True once the charger's screen ways were read and none is left: every note would come back
   * `unsupported`, so the charging side need not read what it would say.
   */
  showsNothing(chargerId: string): boolean;
  meteringCapability(chargerId: string): MeteringCapability;
  /**
   * Why a paid session on the charger could not be watched now (its energy is not sampled during
   * a transaction as asked: a RebootRequired answer, another interval read back), or null.
   */
  samplingGap(chargerId: string): string | null;
  connector(chargerId: string, connectorId: string): ConnectorView;
  requestStart(request: StartRequest): Promise<CommandOutcome>;
  requestStop(chargerId: string, transactionRef: string): Promise<CommandOutcome>;
  /** Applies the site's settings; returns the names of those the charger did not take. */
  configure(chargerId: string): Promise<string[]>;
  /** Caps the transaction's power at zero (a TxProfile charging profile with limit 0). */
  limitToZero(chargerId: string, connectorId: string, transactionRef: string): Promise<StepOutcome>;
  /** The connector's power ceiling: a TxProfile on the running transaction when transactionRef is given
   *  (none, 'no_transaction', when it is not running there), else a TxDefaultProfile on the
   *  connector; watts null clears the gateway's ceiling profile. */
  setPowerLimit(
    chargerId: string,
    connectorId: string,
    limit: PowerLimit,
  ): Promise<PowerLimitOutcome>;
  /** Takes the connector out of (or back into) service: ChangeAvailability. */
  setAvailability(chargerId: string, connectorId: string, operative: boolean): Promise<StepOutcome>;
  unlockConnector(chargerId: string, connectorId: string): Promise<StepOutcome>;
  /** Asks the charger about a transaction it may have forgotten or ended unheard. */
  probeTransaction(
    chargerId: string,
    connectorId: string,
    transactionRef: string,
  ): Promise<TransactionProbe>;
  /**
   * Why the operator took this connector (or its whole charger) out of service, or null: such a
   * connector takes no new session, whatever the charger itself reports.
   */
  operatorHold(chargerId: string, connectorId: string): string | null;
  /**
   * Hands the running transaction a new limit of what it may draw, held by the charger itself
   * (OCPP 2.1 transactionLimit): 'accepted' when the charger was asked to report the transaction
   * so that the limit rides on the answer; 'not_supported' (nothing sent) where the protocol has
   * no such limit (1.6, 2.0.1); 'rejected' for a transaction it is not running.
   */
  setTransactionLimit(
    chargerId: string,
    transactionRef: string,
    limit: TransactionLimit,
  ): Promise<StepOutcome>;
}

/**
 * What a session may draw, handed to a charger that holds it itself (OCPP 2.1): `energyWh` since
 * the transaction's start (the paid energy), `costNgn` the whole NGN paid (sent only where the
 * charger computes the cost on the session's tariff).
 */
export interface TransactionLimit {
  energyWh: number;
  costNgn: number;
}

/** The session's price as a charger that computes cost is given it (OCPP 2.1 TariffType). */
export interface SessionTariff {
  tariffId: string;
  /** Micro-NGN per Wh, the gateway's exact price (pricing/money.ts). */
  microNgnPerWh: number;
}

export interface TransactionStarted {
  chargerId: string;
  connectorId: string;
  idToken: string;
  transactionRef: string;
  /** Null when the charger did not say: the first register it reports then counts as the start. */
  meterStartWh: number | null;
  /**
   * The start register as the charger wrote it when it had a decimal fraction (`meterStartWh` is
   * it rounded): a 1.6 meterStart in kWh, which only the first register can tell.
   */
  meterStartUnrounded?: number;
  /** The charger's clock. */
  timestamp: string;
  /** Our clock, in ms; rates are measured on it, so a charger's clock skew cannot bend them. */
  receivedAtMs: number;
  /** The charger's stamp (ms on its clock) and when it was measured on ours (charger-clocks.ts). */
  time: MeasuredTime;
  /**
   * False for a start the charger made while offline and reports late (2.0.1 `offline`, or a
   * replay recognised by its stamp); absent: live.
   */
  live?: boolean;
}

/**
 * When a stamped message was measured: `stampMs` on the charger's own clock (rates are its
 * deltas), `measuredAtMs` on ours (its stamp corrected by the charger's estimated clock offset;
 * never after it arrived). Both are the receive time when the charger's clock is unusable.
 * `epoch`: the charger clock's epoch (charger-clocks.ts); two stamps of one epoch differ by the time
 * between them. Null when the clock is unusable.
 */
export interface MeasuredTime {
  stampMs: number;
  measuredAtMs: number;
  epoch: number | null;
}

export interface MeterSample {
  chargerId: string;
  connectorId: string;
  transactionRef: string | null;
  /** Energy.Active.Import.Register, in Wh. */
  energyWh: number | null;
  powerW: number | null;
  socPercent: number | null;
  timestamp: string;
  receivedAtMs: number;
  time: MeasuredTime;
  /**
   * False for samples a charger queued while offline and sends late (2.0.1 `offline`, or a replay
   * recognised by its stamps: charger-clocks.ts): history, not a live rate.
   */
  live: boolean;
}

export interface TransactionEnded {
  chargerId: string;
  transactionRef: string;
  meterStopWh: number | null;
  reason: string;
  timestamp: string;
  receivedAtMs: number;
  time: MeasuredTime;
  /** False for an end the charger queued while offline and sends late (as for samples). */
  live: boolean;
}

/**
 * What the gateway says of a token, in words both protocols can say (each adapter maps them to
 * its AuthorizationStatus: 1.6 has no NoCredit or Unknown and says Invalid).
 */
export type TokenStatus =
  'accepted' | 'blocked' | 'expired' | 'invalid' | 'unknown' | 'concurrent' | 'no_credit';

export interface TokenVerdict {
  accepted: boolean;
  /** The status to answer; absent: 'accepted' or 'invalid' as `accepted` says. */
  status?: TokenStatus;
  /**
   * A short text for the driver at the charger (what was paid, what remains), sent where the
   * charger can show it (2.0.1 `personalMessage`, 1.6 the cost-and-price `SetUserPrice`).
   */
  message?: string;
  /**
   * What an accepted paid session may draw, for a charger that holds the limit itself (OCPP 2.1;
   * 1.6 and 2.0.1 ignore it). Filled for every accepted paid start, a repeated one too.
   */
  limit?: TransactionLimit;
  /** The session's price, for a charger that computes the cost itself (OCPP 2.1). */
  tariff?: SessionTariff;
}

export function tokenStatusOf(verdict: TokenVerdict): TokenStatus {
  return verdict.status ?? (verdict.accepted ? 'accepted' : 'invalid');
}

/** A cost the charger computed itself on the session's tariff (OCPP 2.1 `costDetails`). */
export interface StationCost {
  chargerId: string;
  transactionRef: string;
  /** A running cost (an Updated event), or the final one (Ended). */
  kind: 'running' | 'final';
  /** The charger's total in the tariff's currency (NGN), decimals as it sent them. */
  totalNgn: number;
  /** The energy it priced, in Wh. */
  energyWh: number;
}

export interface ChargerEvents {
  /** Answers Authorize: is this one-time token valid on this charger (and connector, if known)? */
  authorize(chargerId: string, idToken: string, connectorId: string | null): TokenVerdict;
  transactionStarted(event: TransactionStarted): TokenVerdict;
  meterSample(sample: MeterSample): void;
  transactionEnded(event: TransactionEnded): void;
  /** A charger that computes the cost itself reported it (absent: such reports are dropped). */
  stationCost?(cost: StationCost): void;
  chargerOnline(chargerId: string): void;
  /** The charger (re)booted: a register may have reset, transactions may have been lost. */
  chargerBooted(chargerId: string): void;
  /**
   * A live connector status (never one replayed from an offline queue); `transactionless` when
   * the charger's status says no transaction runs there (1.6 Preparing).
   */
  connectorStatus(
    chargerId: string,
    connectorId: string,
    status: ConnectorStatus,
    transactionless?: boolean,
  ): void;
}

/**
 * A charger's own answer to an operator command: its status word (`Accepted`, `Rejected`,
 * `Scheduled`, `Unlocked`, ...; `CallError` when it answered with a CALLERROR) and its whole reply.
 */
export interface ChargerReply {
  status: string;
  raw: unknown;
}

/** Soft waits for running transactions to end (1.6 Soft, 2.0.1 OnIdle); hard does not. */
export type ResetKind = 'soft' | 'hard';

/** What an operator may ask a charger to report now. */
export type TriggerKind = 'status' | 'meter';

/**
 * A firmware file the charger is to fetch and install: `requestId` names the job in the
 * charger's status notifications (2.0.1 echoes it; 1.6 has none).
 */
export interface FirmwareRequest {
  requestId: number;
  location: string;
  retrieveAt: string;
  retries: number;
  retryIntervalSeconds: number;
  /** Signed firmware: 2.0.1 sends these in UpdateFirmware, 1.6 as SignedUpdateFirmware. */
  signing: { signingCertificate: string; signature: string } | null;
}

/** Where the charger is to upload its diagnostics (1.6) or its log (2.0.1 DiagnosticsLog). */
export interface LogRequest {
  requestId: number;
  location: string;
  retries: number;
  retryIntervalSeconds: number;
}

/** The charger's answer to a log request, with the name of the file it will upload, if any. */
export interface LogReply extends ChargerReply {
  fileName: string | null;
}

/** A firmware or log job's progress as the charger tells it, in its own status words. */
export interface TransferStatus {
  kind: 'firmware' | 'log';
  status: string;
  /** The job's requestId when the charger says it (2.0.1); null in 1.6. */
  requestId: number | null;
}

/** One configuration key (1.6) or device-model variable (2.0.1, named `Component.Variable`). */
export interface ConfigurationEntry {
  key: string;
  value: string | null;
  readonly: boolean | null;
  /** The charger's status for this entry when it is not a plain value (2.0.1 attributeStatus). */
  status?: string;
}

export interface ConfigurationReport {
  entries: ConfigurationEntry[];
  unknownKeys: string[];
  raw: unknown;
}

/**
 * What the operator can make a charger do, whatever its protocol. Each call goes out at once or
 * fails: ChargerOfflineError when there is no live connection (nothing is queued), and
 * ChargerTimeoutError when the charger does not answer in time.
 */
export interface ChargerOperations {
  /** Stops a transaction; the charging layer calls it for an operator's session stop. */
  requestStop(chargerId: string, transactionRef: string): Promise<ChargerReply>;
  unlockConnector(chargerId: string, connectorId: string): Promise<ChargerReply>;
  reset(chargerId: string, kind: ResetKind): Promise<ChargerReply>;
  /** connectorId null: the whole charger. */
  setAvailability(
    chargerId: string,
    connectorId: string | null,
    operative: boolean,
  ): Promise<ChargerReply>;
  trigger(chargerId: string, connectorId: string | null, kind: TriggerKind): Promise<ChargerReply>;
  /** keys empty: everything the charger reports (1.6), or the keys the caller names (2.0.1). */
  readConfiguration(chargerId: string, keys: readonly string[]): Promise<ConfigurationReport>;
  changeConfiguration(chargerId: string, key: string, value: string): Promise<ChargerReply>;
  /** Sets the password the charger sends in HTTP basic auth; the reply's status is its answer. */
  setBasicAuthPassword(chargerId: string, password: string): Promise<ChargerReply>;
  updateFirmware(chargerId: string, request: FirmwareRequest): Promise<ChargerReply>;
  requestLog(chargerId: string, request: LogRequest): Promise<LogReply>;
}

/**
 * One token in a charger's local authorization list: 'accepted' starts a transaction from the
 * list (offline too, where the charger is allowed to), 'blocked' is refused there.
 */
export interface LocalListEntry {
  /** The token as bound (what the charger reads off the card). */
  value: string;
  /** The 2.0.1 IdTokenType name (1.6 has none and ignores it). */
  type: string;
  status: 'accepted' | 'blocked';
  /** After this instant the charger treats the token as expired (1.6 expiryDate, 2.0.1 cacheExpiryDateTime). */
  expiresAt: string | null;
}

/**
 * One list update: 'full' replaces the whole list with `put`; 'differential' puts `put` and
 * removes `remove` (tokens named by value). `version` is the list's version after it.
 */
export interface LocalListUpdate {
  kind: 'full' | 'differential';
  version: number;
  put: LocalListEntry[];
  remove: { value: string; type: string }[];
}

export type LocalListOutcome = 'accepted' | 'failed' | 'version_mismatch' | 'not_supported';

/** What the gateway asks of a charger's own authorization (its local list and cache). */
export interface LocalAuthSettings {
  /** Use the local list (1.6 LocalAuthListEnabled, 2.0.1 LocalAuthListCtrlr.Enabled). */
  listEnabled: boolean;
  /** Start from the list while offline (1.6/2.0.1 LocalAuthorizeOffline): the operator's choice. */
  offlineStarts: boolean;
}

/**
 * What a charger said of its local authorization once asked to take the settings. `cache` is
 * 'disabled' only when the charger took AuthorizationCacheEnabled / AuthCacheCtrlr.Enabled false;
 * otherwise it may still cache (or says nothing of a cache) and must be cleared when a cached
 * token could have become unpayable.
 */
export interface LocalAuthCapability {
  /** The charger advertises a local list (1.6 LocalAuthListManagement, 2.0.1 LocalAuthListCtrlr). */
  listSupported: boolean;
  /** Entries the list holds at most, when the charger says (1.6 LocalAuthListMaxLength). */
  maxEntries: number | null;
  /** Entries one SendLocalList may carry, when said (1.6 SendLocalListMaxLength, 2.0.1 ItemsPerMessage). */
  itemsPerMessage: number | null;
  /** Bytes one SendLocalList may take, when said (2.0.1 BytesPerMessage). */
  bytesPerMessage: number | null;
  /** The longest token this protocol carries (1.6 idTag 20, 2.0.1 idToken 36). */
  maxTokenLength: number;
  cache: 'disabled' | 'enabled';
  /** Names of the settings the charger did not take. */
  refused: string[];
}

/**
 * A charger's local list and cache, whatever its protocol. Calls go out at once or fail
 * (ChargerOfflineError, ChargerTimeoutError), as the other commands do.
 */
export interface ChargerLocalAuthorization {
  /** Reads what the charger offers and asks it to take the settings (cache off where it can). */
  prepareLocalAuthorization(
    chargerId: string,
    settings: LocalAuthSettings,
  ): Promise<LocalAuthCapability>;
  /** The version of the list the charger holds (0: none); null when it has no local list. */
  localListVersion(chargerId: string): Promise<number | null>;
  sendLocalList(chargerId: string, update: LocalListUpdate): Promise<LocalListOutcome>;
  clearCache(chargerId: string): Promise<StepOutcome>;
}
