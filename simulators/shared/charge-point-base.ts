import { CentralSystemLink } from './central-system-link.js';
import { resolveOptions } from './charge-point-options.js';
import type {
  BootFieldLimits,
  ChargePointOptions,
  ResolvedChargePointOptions,
} from './charge-point-options.js';
import type { ProtocolFlavour } from './events.js';
import { ChargePointEmitter } from './charge-point-emitter.js';
import { ConnectorLocks } from './connector-locks.js';
import type { MeteredOutlet } from './metered-outlet.js';
import type { CallMap, OcppProtocol, RpcClient } from './rpc-client.js';
import { ChargingProfiles, scopeOf } from './charging-profile.js';
import type { OutletProfileView, ProfileRequest } from './charging-profile.js';
import { SimTimers } from './sim-timers.js';
import { WireQuirks } from './wire-quirks.js';

// When the central system answers a boot with interval 0 the charger picks its own delay.
const DEFAULT_BOOT_RETRY_SECONDS = 30;
// Reconnect attempts after a Reset are paced in wall time so a high timeFactor does not hammer
// an unreachable central system.
const REBOOT_RETRY_WALL_SECONDS = 2;

export interface BootOutcome {
  status: 'Accepted' | 'Pending' | 'Rejected';
  interval: number;
}

export interface ProtocolSetup<O extends MeteredOutlet> {
  protocol: OcppProtocol;
  bootFieldLimits: BootFieldLimits;
  createOutlet(id: number, settings: ResolvedChargePointOptions): O;
}

/**
 * What every simulated charger does the same way whatever the protocol version: the socket and
 * its drops, the boot retry loop, heartbeats, reboots and simulated-time timers. The versions
 * fill in the messages.
 */
export abstract class ChargePointBase<
  P extends ProtocolFlavour,
  Out extends CallMap<Out>,
  O extends MeteredOutlet,
> extends ChargePointEmitter<P> {
  override readonly identity: string;
  protected readonly settings: ResolvedChargePointOptions;
  protected readonly timers: SimTimers;
  /** 1.6 connectors or 2.0.1 EVSEs, index = id - 1. */
  protected readonly outlets: O[];
  protected readonly link: CentralSystemLink<Out>;
  /** How this charger's firmware encodes what it sends (its personality). */
  protected readonly wire: WireQuirks;
  readonly locks = new ConnectorLocks();
  /** Installed charging profiles; they survive reboots, a TxProfile dies with its transaction. */
  protected readonly profiles: ChargingProfiles;
  // Per outlet: the transaction a Relative schedule counts from, and when it started.
  private readonly transactionOrigins = new Map<number, { atMs: number }>();
  protected active = false;
  protected booted = false;
  private rebooting = false;

  constructor(options: ChargePointOptions, setup: ProtocolSetup<O>) {
    super();
    this.settings = resolveOptions(options, setup.bootFieldLimits, setup.protocol);
    this.wire = new WireQuirks(setup.protocol, this.settings.personality, this.settings.vendor);
    this.identity = this.settings.identity;
    this.timers = new SimTimers(this.settings.timeFactor, (error) =>
      this.warn('timer task failed', error),
    );
    this.profiles = new ChargingProfiles(this.settings.timeFactor);
    this.outlets = Array.from({ length: this.settings.connectors }, (_, index) =>
      setup.createOutlet(index + 1, this.settings),
    );
    this.link = new CentralSystemLink<Out>(
      {
        protocol: setup.protocol,
        endpoint: this.settings.url,
        identity: this.identity,
        password: this.settings.password,
        tls: this.settings.tls,
        reconnect: this.settings.reconnect,
        callTimeoutMs: this.settings.callTimeoutMs,
        strict: !this.settings.personality.bendsTheSchema,
      },
      {
        frame: (direction, message) => this.emit('frame', { direction, message }),
        dropped: (code, reason) => {
          if (this.active) this.emit('disconnected', { code, reason });
        },
        // The first 'open' of a session precedes the boot; later ones are reconnects.
        opened: () => {
          if (this.active && this.booted) this.defer(() => this.onReconnected());
        },
        lost: (code) => this.onConnectionLost(code),
        registerHandlers: (client) => this.registerHandlers(client),
        reshape: (method, params) => this.wire.request(method, params),
      },
    );
  }

  get timeFactor(): number {
    return this.settings.timeFactor;
  }

  get connectorCount(): number {
    return this.outlets.length;
  }

  get isBooted(): boolean {
    return this.booted;
  }

  abstract get heartbeatIntervalSeconds(): number;

  /** Connects, boots (retrying while Pending/Rejected) and reports every status. */
  async connect(): Promise<void> {
    if (this.active) throw new Error(`${this.identity} is already connected`);
    this.active = true;
    try {
      await this.link.open();
      await this.bootAndAnnounce();
    } catch (error) {
      await this.disconnect();
      throw error;
    }
  }

  /**
   * Switches the charger off: stops every timer and energy flow and closes the socket. Running
   * transactions are ended with reason PowerLoss on the next connect(), as hardware does.
   */
  async disconnect(): Promise<void> {
    this.active = false;
    this.booted = false;
    this.link.abortCalls();
    this.timers.clearAll();
    this.onPowerOff();
    for (const outlet of this.outlets) outlet.setPowered(false);
    await this.closeSocket();
  }

  close(): Promise<void> {
    return this.disconnect();
  }

  // ---------------------------------------------------------------- for the versions

  /** Boots, then announces statuses and resumes whatever survived a power cycle. */
  protected abstract bootAndAnnounce(): Promise<void>;
  protected abstract sendBootNotification(): Promise<BootOutcome>;
  protected abstract setHeartbeatInterval(seconds: number): void;
  protected abstract onHeartbeatDue(): Promise<void>;
  /** The socket came back after a drop; the session (boot) is still valid. */
  protected abstract onReconnected(): Promise<void>;
  /** Drops what does not survive switching off (reservations waiting for a vehicle). */
  protected abstract onPowerOff(): void;
  /** After a reboot: faults cleared, each outlet reports what is physically there. */
  protected abstract resetToPowerOnState(): void;
  /** Registers the handlers for calls from the central system on a new client. */
  protected abstract registerHandlers(client: RpcClient): void;
  /** Arms a timer for the instant the outlet's vehicle is full, if energy is flowing. */
  protected abstract scheduleFullCheck(outlet: O): void;

  /** The transaction running on an outlet (its id as the central system knows it). */
  protected abstract transactionRefOf(outlet: O): string | number | undefined;

  /** Smart Charging is there at all (else its calls get no handler: a CALLERROR). */
  protected get smartCharging(): boolean {
    return !this.settings.personality.has('profiles-not-supported');
  }

  /**
   * SetChargingProfile as the firmware's personality answers it. A well-behaved charger installs
   * the profile (per outlet, replacing one of the same id or purpose and stack level) and draws
   * the composed limit from its next physics step, profileDelaySeconds later; `ignores-profile`
   * accepts and changes nothing; `rejects-profiles` refuses. A TxProfile needs a running
   * transaction (the one named, if named); a max profile belongs to the whole charger (0).
   */
  protected answerChargingProfile(
    connectorId: number,
    targets: readonly O[] | undefined,
    profile: ProfileRequest,
  ): 'Accepted' | 'Rejected' {
    const personality = this.settings.personality;
    const scope = scopeOf(profile.purpose);
    if (personality.has('rejects-profiles') || !targets || targets.length === 0) return 'Rejected';
    if (scope === undefined || (scope === 'max' && connectorId !== 0)) return 'Rejected';
    if (profile.schedule.chargingSchedulePeriod.length === 0) return 'Rejected';
    let request = profile;
    if (scope === 'tx') {
      const [outlet] = targets;
      const running = connectorId === 0 || !outlet ? undefined : this.transactionRefOf(outlet);
      if (running === undefined) return 'Rejected';
      if (profile.transactionId !== undefined && profile.transactionId !== running)
        return 'Rejected';
      request = { ...profile, transactionId: running };
    }
    const obeys = !personality.has('ignores-profile');
    if (obeys) {
      this.profiles.install(request, connectorId, scope);
      for (const outlet of targets) this.reapplyProfiles(outlet, true);
    }
    this.emit('chargingProfile', { connectorId, purpose: profile.purpose, applied: obeys });
    return 'Accepted';
  }

  /** ClearChargingProfile: Accepted when a profile matched (an ignoring firmware: always). */
  protected clearChargingProfiles(criteria: {
    id?: number;
    outletId?: number;
    purpose?: string;
    stackLevel?: number;
  }): 'Accepted' | 'Unknown' {
    const personality = this.settings.personality;
    if (personality.has('ignores-profile')) return 'Accepted';
    if (personality.has('rejects-profiles')) return 'Unknown';
    const cleared = this.profiles.clear(criteria);
    for (const outlet of this.outlets) this.reapplyProfiles(outlet, true);
    return cleared > 0 ? 'Accepted' : 'Unknown';
  }

  /** GetCompositeSchedule: the limit the outlet (0: the charger) will apply, period by period. */
  protected compositeSchedule(outletId: number, duration: number, unit: 'W' | 'A' | undefined) {
    const outlet = outletId === 0 ? undefined : this.outlets[outletId - 1];
    if (outletId !== 0 && !outlet) return undefined;
    const rateUnit = unit ?? 'W';
    const chargerMaxW = this.settings.maxPowerW * (outlet ? 1 : this.outlets.length);
    const view: OutletProfileView = outlet
      ? this.profileView(outlet)
      : { id: 0, transactionId: undefined, transactionStartMs: undefined, socPercent: undefined };
    return {
      scheduleStart: new Date().toISOString(),
      duration,
      chargingRateUnit: rateUnit,
      chargingSchedulePeriod: this.profiles.composite(view, duration, rateUnit, chargerMaxW),
    };
  }

  /** A transaction began on the outlet: its default profile holds from the first watt. */
  protected transactionBegan(outlet: O): void {
    this.reapplyProfiles(outlet, false);
  }

  /** A transaction ended: its TxProfiles go with it. */
  protected transactionEnded(outlet: O): void {
    this.profiles.dropTransactionProfiles(outlet.id);
    this.reapplyProfiles(outlet, false);
  }

  /** Applies the composed limit now or after the charger's reaction time. */
  protected reapplyProfiles(outlet: O, delayed: boolean): void {
    const delay = delayed ? this.settings.profileDelaySeconds : 0;
    if (delay <= 0) {
      this.applyProfiles(outlet);
      return;
    }
    this.timers.after(`profile:${outlet.id}`, delay, () => this.applyProfiles(outlet));
  }

  private applyProfiles(outlet: O): void {
    const { limitW, nextChange } = this.profiles.limitOn(this.profileView(outlet));
    if (limitW !== outlet.powerLimitW) {
      outlet.limitPower(limitW);
      this.scheduleFullCheck(outlet);
      this.emit('powerLimit', { connectorId: outlet.id, limitW: limitW ?? null });
    }
    // A schedule moves on by itself: the next period is applied when it begins.
    if (nextChange === undefined || this.transactionRefOf(outlet) === undefined)
      this.timers.clear(`profileNext:${outlet.id}`);
    else
      this.timers.after(`profileNext:${outlet.id}`, nextChange, () => this.applyProfiles(outlet));
  }

  private profileView(outlet: O): OutletProfileView {
    const ref = this.transactionRefOf(outlet);
    let origin = this.transactionOrigins.get(outlet.id);
    if (ref === undefined) this.transactionOrigins.delete(outlet.id);
    // A new transaction always follows an end (which forgets the origin); a 1.6 provisional id
    // replaced by the assigned one is the same transaction.
    else if (!origin) {
      origin = { atMs: performance.now() };
      this.transactionOrigins.set(outlet.id, origin);
    }
    return {
      id: outlet.id,
      transactionId: ref,
      transactionStartMs: ref === undefined ? undefined : origin?.atMs,
      socPercent: outlet.socPercent,
    };
  }

  protected async boot(): Promise<void> {
    for (;;) {
      let retrySeconds = DEFAULT_BOOT_RETRY_SECONDS;
      try {
        const conf = await this.sendBootNotification();
        if (conf.interval > 0) retrySeconds = conf.interval;
        if (conf.status === 'Accepted') {
          if (conf.interval > 0) this.setHeartbeatInterval(conf.interval);
          this.booted = true;
          return;
        }
        this.warn(`BootNotification ${conf.status}; retrying in ${retrySeconds} s`);
      } catch (error) {
        if (!this.active) throw error;
        this.warn('BootNotification failed; retrying', error);
      }
      const slept = await this.timers.sleep(retrySeconds);
      if (!slept || !this.active) throw new Error(`${this.identity} disconnected before boot`);
    }
  }

  /** Reset: end transactions as the version requires, close, reconnect (retrying) and boot. */
  protected async reboot(endTransactions: () => Promise<void>): Promise<void> {
    if (this.rebooting || !this.active) return;
    this.rebooting = true;
    try {
      await endTransactions();
      this.booted = false;
      this.timers.clearAll();
      await this.closeSocket();
      this.resetToPowerOnState();
      while (this.active) {
        try {
          await this.link.open();
          break;
        } catch (error) {
          this.warn('reconnect after reset failed; retrying', error);
          await this.timers.sleep(REBOOT_RETRY_WALL_SECONDS * this.settings.timeFactor);
        }
      }
      if (this.active) await this.bootAndAnnounce();
    } catch (error) {
      this.warn('reboot failed', error);
    } finally {
      this.rebooting = false;
    }
  }

  /**
   * The central system set a new basic-auth password (1.6 AuthorizationKey, 2.0.1
   * BasicAuthPassword): after the reply the charger connects again with it, as the security
   * whitepaper has it; its boot and transactions carry on as after a drop.
   */
  protected changePassword(password: string): void {
    this.settings.password = password;
    this.link.setPassword(password);
    this.defer(async () => {
      await this.closeSocket();
      await this.link.open();
    });
  }

  protected call<M extends keyof Out & string>(
    method: M,
    params: Out[M]['req'],
  ): Promise<Out[M]['conf']> {
    return this.link.call(method, params);
  }

  /** A call whose failure is only worth a warning (status, meter values, heartbeats). */
  protected async send<M extends keyof Out & string>(
    method: M,
    params: Out[M]['req'],
  ): Promise<Out[M]['conf'] | undefined> {
    try {
      return await this.call(method, params);
    } catch (error) {
      this.warn(`${method} failed`, error);
      return undefined;
    }
  }

  protected restartHeartbeat(): void {
    const interval = this.heartbeatIntervalSeconds;
    if (!this.active || interval <= 0) {
      this.timers.clear('heartbeat');
      return;
    }
    this.timers.every('heartbeat', interval, () => this.onHeartbeatDue());
  }

  protected async closeSocket(): Promise<void> {
    try {
      await this.link.close();
    } catch (error) {
      this.warn('closing the socket failed', error);
    }
  }

  /** Runs work that must follow our reply (e.g. a transaction start after accepting it). */
  protected defer(task: () => Promise<unknown>): void {
    // setImmediate runs after the microtasks in which ocpp-rpc sends the handler's result.
    setImmediate(() => {
      if (!this.active) return;
      task().catch((error: unknown) => this.warn('deferred task failed', error));
    });
  }

  protected outlet(id: number): O {
    const outlet = this.outlets[id - 1];
    if (!outlet || !Number.isInteger(id)) {
      throw new RangeError(`connector ${id} does not exist on ${this.identity}`);
    }
    return outlet;
  }

  protected warn(message: string, error?: unknown): void {
    // After disconnect() aborted in-flight calls their failures are expected noise.
    if (!this.active && error !== undefined) return;
    this.emit('warning', error === undefined ? { message } : { message, error });
  }

  private onConnectionLost(code: number | undefined): void {
    if (!this.active) return;
    if (this.booted) this.warn(`connection closed for good (code ${String(code)})`);
    this.active = false;
    this.booted = false;
    this.timers.clearAll();
  }
}
