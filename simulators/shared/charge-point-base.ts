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
import { profileLimitW } from './charging-profile.js';
import type { ScheduleLike } from './charging-profile.js';
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

  /** A charging profile's power limit on one outlet (undefined: none). */
  protected limitPower(outlet: O, limitW: number | undefined): void {
    outlet.limitPower(limitW);
    this.scheduleFullCheck(outlet);
  }

  /**
   * SetChargingProfile as the firmware's personality answers it: only chargers with a profile
   * personality do smart charging (the default refuses); an obeying one applies a Tx(Default)
   * profile's limit to the outlets it names, an ignoring one accepts and changes nothing.
   */
  protected answerChargingProfile(
    connectorId: number,
    targets: readonly O[] | undefined,
    profile: { purpose: string; transactionId?: string | number; schedule?: ScheduleLike },
    transactionOf: (outlet: O) => string | number | undefined,
  ): 'Accepted' | 'Rejected' {
    const personality = this.settings.personality;
    const obeys = personality.has('obeys-profile');
    if (!obeys && !personality.has('ignores-profile')) return 'Rejected';
    if (!targets || targets.length === 0) return 'Rejected';
    const matching = targets.filter(
      (outlet) =>
        profile.transactionId === undefined || transactionOf(outlet) === profile.transactionId,
    );
    if (profile.purpose === 'TxProfile' && matching.length === 0) return 'Rejected';
    const schedule = obeys ? profile.schedule : undefined;
    if (schedule) {
      for (const outlet of matching) {
        const limit = profileLimitW(profile.purpose, schedule, outlet.socPercent);
        if (limit !== undefined) this.limitPower(outlet, limit);
      }
    }
    this.emit('chargingProfile', { connectorId, purpose: profile.purpose, applied: obeys });
    return 'Accepted';
  }

  /** ClearChargingProfile: lifts every limit where profiles are supported at all. */
  protected clearChargingProfiles(targets: readonly O[]): 'Accepted' | 'Unknown' {
    const personality = this.settings.personality;
    if (!personality.has('obeys-profile') && !personality.has('ignores-profile')) return 'Unknown';
    for (const outlet of targets) this.limitPower(outlet, undefined);
    return 'Accepted';
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
