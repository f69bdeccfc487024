import { Personality } from './personalities.js';
import type { ClientTls, OcppProtocol } from './rpc-client.js';

export type RemoteStartPolicy = 'accept' | 'reject' | 'ignore';

export interface ChargePointOptions {
  /** Central system endpoint without the identity, e.g. ws://127.0.0.1:8080/ocpp. */
  url: string;
  /** Charge point id; ocpp-rpc appends it to the URL. */
  identity: string;
  /** OCPP basic auth password (security profiles 1 and 2; optional with 3). */
  password?: string;
  /** wss:// settings: CA of the central system, client certificate and key for profile 3. */
  tls?: ClientTls;
  /** Connectors (1.6) or EVSEs with one connector each (2.0.1), numbered 1..connectors. */
  connectors: number;
  /** Charger power cap per connector in W (default 50 000). */
  maxPowerW?: number;
  /** Simulated seconds per wall-clock second (default 1). */
  timeFactor?: number;
  /**
   * Simulated seconds between accepting a charging profile and drawing the new power (default 1,
   * as real chargers take about a second; so 1 / timeFactor s of wall time).
   */
  profileDelaySeconds?: number;
  /** Initial energy register per connector in Wh (default 1 000 000). */
  meterStartWh?: number;
  /**
   * How to answer a remote start (1.6 RemoteStartTransaction, 2.0.1 RequestStartTransaction);
   * default 'accept'; 'ignore' never answers, so the central system times out.
   */
  remoteStart?: RemoteStartPolicy;
  /** Unplug (stop reason EVDisconnected) once the EV reaches 100 % SoC. */
  unplugWhenFull?: boolean;
  vendor?: string;
  model?: string;
  serialNumber?: string;
  firmwareVersion?: string;
  /** Reconnect after the socket drops (default true), as hardware does. */
  reconnect?: boolean;
  /** Wall-clock timeout for calls to the central system (default 30 000). */
  callTimeoutMs?: number;
  /**
   * Firmware personalities (see personalities.ts), composable: e.g. ['numeric-values',
   * 'clock-skew=-5']; a comma-separated string works too. Default: the well-behaved charger.
   */
  personality?: readonly string[] | string;
}

export type ResolvedChargePointOptions = Required<
  Omit<ChargePointOptions, 'password' | 'serialNumber' | 'tls' | 'personality'>
> &
  Pick<ChargePointOptions, 'password' | 'serialNumber' | 'tls'> & { personality: Personality };

function requireRange(name: string, value: number, min: number, integer = false): void {
  if (!Number.isFinite(value) || value < min || (integer && !Number.isInteger(value))) {
    throw new RangeError(`${name} must be ${integer ? 'an integer ' : 'a number '}>= ${min}`);
  }
}

/** BootNotification field lengths, which the protocol versions' schemas cap differently. */
export interface BootFieldLimits {
  vendor: number;
  model: number;
  firmwareVersion: number;
}

function requireMaxLength(name: string, value: string, max: number): void {
  // Strict mode would reject every BootNotification with a longer value.
  if (value.length === 0 || value.length > max) {
    throw new RangeError(`${name} must be 1..${max} characters`);
  }
}

export function resolveOptions(
  options: ChargePointOptions,
  limits: BootFieldLimits,
  protocol: OcppProtocol,
): ResolvedChargePointOptions {
  const personality = options.personality ?? [];
  const resolved: ResolvedChargePointOptions = {
    url: options.url,
    identity: options.identity,
    password: options.password,
    tls: options.tls,
    connectors: options.connectors,
    maxPowerW: options.maxPowerW ?? 50_000,
    timeFactor: options.timeFactor ?? 1,
    profileDelaySeconds: options.profileDelaySeconds ?? 1,
    meterStartWh: options.meterStartWh ?? 1_000_000,
    remoteStart: options.remoteStart ?? 'accept',
    unplugWhenFull: options.unplugWhenFull ?? false,
    vendor: options.vendor ?? 'FleetSim',
    model: options.model ?? 'DC-Sim-50',
    serialNumber: options.serialNumber,
    firmwareVersion: options.firmwareVersion ?? '1.0.0-sim',
    reconnect: options.reconnect ?? true,
    callTimeoutMs: options.callTimeoutMs ?? 30_000,
    personality: Personality.parse(
      typeof personality === 'string' ? [personality] : personality,
      protocol,
    ),
  };
  if (!/^wss?:\/\//.test(resolved.url)) throw new RangeError('url must start with ws:// or wss://');
  requireMaxLength('identity', resolved.identity, 48);
  requireRange('connectors', resolved.connectors, 1, true);
  requireRange('maxPowerW', resolved.maxPowerW, 1);
  if (!(resolved.timeFactor > 0)) throw new RangeError('timeFactor must be > 0');
  requireRange('profileDelaySeconds', resolved.profileDelaySeconds, 0);
  requireRange('meterStartWh', resolved.meterStartWh, 0, true);
  requireRange('callTimeoutMs', resolved.callTimeoutMs, 1);
  requireMaxLength('vendor', resolved.vendor, limits.vendor);
  requireMaxLength('model', resolved.model, limits.model);
  requireMaxLength('firmwareVersion', resolved.firmwareVersion, limits.firmwareVersion);
  if (!['accept', 'reject', 'ignore'].includes(resolved.remoteStart)) {
    throw new RangeError('remoteStart must be accept, reject or ignore');
  }
  return resolved;
}
