export type RemoteStartPolicy = 'accept' | 'reject' | 'ignore';

export interface ChargePointOptions {
  /** Central system endpoint without the identity, e.g. ws://127.0.0.1:8080/ocpp. */
  url: string;
  /** Charge point id; ocpp-rpc appends it to the URL. */
  identity: string;
  /** OCPP basic auth password (security profile 1). */
  password?: string;
  /** Connectors are numbered 1..connectors. */
  connectors: number;
  /** Charger power cap per connector in W (default 50 000). */
  maxPowerW?: number;
  /** Simulated seconds per wall-clock second (default 1). */
  timeFactor?: number;
  /** Initial energy register per connector in Wh (default 1 000 000). */
  meterStartWh?: number;
  /** How to answer RemoteStartTransaction (default 'accept'; 'ignore' never answers). */
  remoteStart?: RemoteStartPolicy;
  /** Unplug (StopTransaction reason EVDisconnected) once the EV reaches 100 % SoC. */
  unplugWhenFull?: boolean;
  vendor?: string;
  model?: string;
  serialNumber?: string;
  firmwareVersion?: string;
  /** Reconnect after the socket drops (default true), as hardware does. */
  reconnect?: boolean;
  /** Wall-clock timeout for calls to the central system (default 30 000). */
  callTimeoutMs?: number;
}

export type ResolvedChargePointOptions = Required<
  Omit<ChargePointOptions, 'password' | 'serialNumber'>
> &
  Pick<ChargePointOptions, 'password' | 'serialNumber'>;

function requireRange(name: string, value: number, min: number, integer = false): void {
  if (!Number.isFinite(value) || value < min || (integer && !Number.isInteger(value))) {
    throw new RangeError(`${name} must be ${integer ? 'an integer ' : 'a number '}>= ${min}`);
  }
}

function requireMaxLength(name: string, value: string, max: number): void {
  // The OCPP 1.6 schemas cap these lengths; strict mode would reject every BootNotification.
  if (value.length === 0 || value.length > max) {
    throw new RangeError(`${name} must be 1..${max} characters`);
  }
}

export function resolveOptions(options: ChargePointOptions): ResolvedChargePointOptions {
  const resolved: ResolvedChargePointOptions = {
    url: options.url,
    identity: options.identity,
    password: options.password,
    connectors: options.connectors,
    maxPowerW: options.maxPowerW ?? 50_000,
    timeFactor: options.timeFactor ?? 1,
    meterStartWh: options.meterStartWh ?? 1_000_000,
    remoteStart: options.remoteStart ?? 'accept',
    unplugWhenFull: options.unplugWhenFull ?? false,
    vendor: options.vendor ?? 'FleetSim',
    model: options.model ?? 'DC-Sim-50',
    serialNumber: options.serialNumber,
    firmwareVersion: options.firmwareVersion ?? '1.0.0-sim',
    reconnect: options.reconnect ?? true,
    callTimeoutMs: options.callTimeoutMs ?? 30_000,
  };
  if (!/^wss?:\/\//.test(resolved.url)) throw new RangeError('url must start with ws:// or wss://');
  requireMaxLength('identity', resolved.identity, 48);
  requireRange('connectors', resolved.connectors, 1, true);
  requireRange('maxPowerW', resolved.maxPowerW, 1);
  if (!(resolved.timeFactor > 0)) throw new RangeError('timeFactor must be > 0');
  requireRange('meterStartWh', resolved.meterStartWh, 0, true);
  requireRange('callTimeoutMs', resolved.callTimeoutMs, 1);
  requireMaxLength('vendor', resolved.vendor, 20);
  requireMaxLength('model', resolved.model, 20);
  requireMaxLength('firmwareVersion', resolved.firmwareVersion, 50);
  if (!['accept', 'reject', 'ignore'].includes(resolved.remoteStart)) {
    throw new RangeError('remoteStart must be accept, reject or ignore');
  }
  return resolved;
}
