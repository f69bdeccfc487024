import { TOKEN_BUFFER_LENGTH } from './personalities.js';
import type { Personality } from './personalities.js';
import type { OcppProtocol } from './rpc-client.js';

type Json = Record<string, unknown>;
type Sample = Json & { measurand?: string; value: unknown; phase?: string };

const REGISTER = 'Energy.Active.Import.Register';
const INTERVAL = 'Energy.Active.Import.Interval';
const PHASES = ['L1', 'L2', 'L3'] as const;
const LOWERED_UNITS = new Set(['Wh', 'kWh', 'W', 'kW']);
const TIMESTAMP_KEYS = new Set(['timestamp', 'generatedAt']);
// Contexts of samples taken while a transaction runs, which a no-energy meter leaves empty.
const DURING_TRANSACTION = new Set(['Sample.Periodic', 'Sample.Clock', 'Trigger']);

/** Stop reasons as some firmware spells them, outside the protocols' enumerations. */
const VENDOR_STOP_REASONS: Record<string, string> = {
  Remote: 'RemoteStopRequest',
  Local: 'StopButton',
  EVDisconnected: 'EVUnplugged',
  DeAuthorized: 'AuthorizationRevoked',
  PowerLoss: 'MainsFailure',
};

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function splitEvenly(total: number): number[] {
  const third = Math.floor(total / 3);
  return [third, third, total - 2 * third];
}

/**
 * Rewrites the frames a well-behaved simulator builds into what a charger of the given
 * personality puts on the wire. Behaviour (what the charger does) lives in the simulators; this
 * is only the encoding. Stateful for interval energy: the register each interval starts from.
 */
export class WireQuirks {
  // Register at the start of the next interval, by 1.6 connector or 2.0.1 transaction.
  private readonly intervalStart = new Map<string, number>();

  constructor(
    private readonly protocol: OcppProtocol,
    private readonly personality: Personality,
    private readonly vendor: string,
  ) {}

  request(method: string, params: object): object {
    if (!this.personality.bendsTheSchema) return params;
    const frame = structuredClone(params) as Json;
    if (this.protocol === 'ocpp1.6') this.reshape16(method, frame);
    else this.reshape201(method, frame);
    this.reshapeTimestamps(frame);
    this.padTokens(frame);
    if (this.personality.has('vendor-fields')) {
      frame.vendorExtension = { vendor: this.vendor, build: '4.2.1-r7' };
    }
    return frame;
  }

  /**
   * A card's UID or a vehicle's MAC (hex bytes, as its reader got them) written as this firmware
   * writes it into an idTag / idToken: lower case, zero-padded on the left, bytes separated.
   * Anything that is not hex bytes (a key code, an eMAID) is the firmware's as given.
   */
  readerId(hex: string): string {
    const { lowercaseUids, uidWidth, uidSeparator } = this.personality.tokens;
    if (!/^(?:[0-9A-Fa-f]{2})+$/.test(hex)) return hex;
    let digits = hex.toUpperCase();
    if (uidWidth > digits.length) digits = digits.padStart(uidWidth + (uidWidth % 2), '0');
    if (lowercaseUids) digits = digits.toLowerCase();
    return uidSeparator === '' ? digits : (digits.match(/../g) ?? []).join(uidSeparator);
  }

  result(_method: string, result: unknown): unknown {
    if (!this.personality.has('vendor-fields') || !isObject(result)) return result;
    return { ...result, vendorExtension: { vendor: this.vendor } };
  }

  /** padded-tokens: the idTag buffer goes out whole, its unused bytes spaces or NULs. */
  private padTokens(frame: Json): void {
    const fill = this.personality.tokens.tokenPadding;
    if (fill === '') return;
    const pad = (value: unknown): unknown =>
      typeof value === 'string' ? value.padEnd(TOKEN_BUFFER_LENGTH, fill) : value;
    if ('idTag' in frame) frame.idTag = pad(frame.idTag);
    if (isObject(frame.idToken)) frame.idToken.idToken = pad(frame.idToken.idToken);
  }

  private reshape16(method: string, frame: Json): void {
    const p = this.personality;
    if (method === 'StartTransaction') {
      if (p.has('no-meter-start')) frame.meterStart = 0;
      this.intervalStart.set(`c${String(frame.connectorId)}`, Number(frame.meterStart));
    }
    if (method === 'StopTransaction') {
      if (p.has('vendor-stop-reason')) frame.reason = vendorReason(frame.reason);
      this.reshapeMeterValues(frame.transactionData, undefined);
    }
    if (method === 'MeterValues') {
      const inTransaction = frame.transactionId !== undefined;
      this.reshapeMeterValues(
        frame.meterValue,
        inTransaction ? `c${String(frame.connectorId)}` : undefined,
      );
      if (inTransaction && p.has('no-txid-meter')) delete frame.transactionId;
      if (inTransaction && p.has('connector-zero-meter')) frame.connectorId = 0;
    }
  }

  private reshape201(method: string, frame: Json): void {
    const p = this.personality;
    if (method === 'MeterValues') this.reshapeMeterValues(frame.meterValue, undefined);
    if (method !== 'TransactionEvent') return;
    const info = isObject(frame.transactionInfo) ? frame.transactionInfo : {};
    const key = `t${String(info.transactionId)}`;
    if (frame.eventType === 'Started') {
      if (p.has('no-meter-start')) delete frame.meterValue;
      const begin = registerOf(frame.meterValue);
      if (begin !== undefined) this.intervalStart.set(key, begin);
    }
    if (p.has('vendor-stop-reason') && info.stoppedReason !== undefined) {
      info.stoppedReason = vendorReason(info.stoppedReason);
    }
    this.reshapeMeterValues(frame.meterValue, key);
    if (frame.eventType === 'Ended') this.intervalStart.delete(key);
  }

  /** The sampled values of a meterValue list, in place; `key` marks transaction samples. */
  private reshapeMeterValues(list: unknown, key: string | undefined): void {
    if (!Array.isArray(list)) return;
    for (const entry of list as unknown[]) {
      if (!isObject(entry) || !Array.isArray(entry.sampledValue)) continue;
      let samples = (entry.sampledValue as unknown[]).filter(isObject) as Sample[];
      samples = samples.flatMap((sample) => this.reshapeSample(sample, key));
      entry.sampledValue = samples;
    }
  }

  private reshapeSample(sample: Sample, key: string | undefined): Sample[] {
    const p = this.personality;
    const energy = sample.measurand === undefined || sample.measurand === REGISTER;
    const context = typeof sample.context === 'string' ? sample.context : 'Sample.Periodic';
    if (energy && key !== undefined && p.has('no-energy') && DURING_TRANSACTION.has(context)) {
      return [];
    }
    let out: Sample[] = [sample];
    if (energy && key !== undefined && p.has('interval-energy')) {
      const register = Number(sample.value);
      const start = this.intervalStart.get(key) ?? register;
      this.intervalStart.set(key, register);
      out = [{ ...sample, measurand: INTERVAL, value: this.encode(register - start) }];
    }
    const splittable = energy || sample.measurand === 'Power.Active.Import';
    if (splittable && p.has('per-phase') && sample.phase === undefined) {
      out = out.flatMap((one) =>
        splitEvenly(Number(one.value)).map((part, index) => ({
          ...one,
          value: this.encode(part),
          phase: PHASES[index],
        })),
      );
    }
    if (energy && !p.has('interval-energy') && p.has('kwh-register')) {
      out = out.map((one) =>
        this.inWh(one) ? this.withUnit({ ...one, value: kwh(one.value) }, 'kWh') : one,
      );
    }
    return out.map((one) => this.finish(one));
  }

  private encode(value: number): string | number {
    return this.protocol === 'ocpp1.6' ? String(value) : value;
  }

  private withUnit(sample: Sample, unit: string): Sample {
    if (this.protocol === 'ocpp1.6') return { ...sample, unit };
    return {
      ...sample,
      unitOfMeasure: { ...(isObject(sample.unitOfMeasure) ? sample.unitOfMeasure : {}), unit },
    };
  }

  /** Stated in Wh, or with no unit (which means Wh); not already kWh or scaled. */
  private inWh(sample: Sample): boolean {
    const unit = this.unitOf(sample);
    const scaled = isObject(sample.unitOfMeasure) && Boolean(sample.unitOfMeasure.multiplier);
    return (unit === undefined || unit === 'Wh') && !scaled;
  }

  private unitOf(sample: Sample): string | undefined {
    const holder = this.protocol === 'ocpp1.6' ? sample : sample.unitOfMeasure;
    return isObject(holder) && typeof holder.unit === 'string' ? holder.unit : undefined;
  }

  private finish(sample: Sample): Sample {
    let out = sample;
    if (this.protocol === 'ocpp1.6' && this.personality.has('numeric-values')) {
      out = { ...out, value: Number(out.value) };
    }
    const unit = this.unitOf(out);
    if (this.personality.has('lowercase-units') && unit !== undefined && LOWERED_UNITS.has(unit)) {
      out = this.withUnit(out, unit.toLowerCase());
    }
    if (this.personality.has('vendor-fields')) out = { ...out, vendorQuality: 'Good' };
    return out;
  }

  private reshapeTimestamps(value: unknown): void {
    const p = this.personality;
    if (p.clockSkewMs === 0 && !p.has('no-millis-timestamps')) return;
    if (Array.isArray(value)) {
      for (const item of value) this.reshapeTimestamps(item);
      return;
    }
    if (!isObject(value)) return;
    for (const [name, field] of Object.entries(value)) {
      if (TIMESTAMP_KEYS.has(name) && typeof field === 'string') {
        const shifted = new Date(Date.parse(field) + p.clockSkewMs).toISOString();
        value[name] = p.has('no-millis-timestamps') ? shifted.replace(/\.\d{3}Z$/, 'Z') : shifted;
      } else this.reshapeTimestamps(field);
    }
  }
}

function vendorReason(reason: unknown): unknown {
  return typeof reason === 'string' ? (VENDOR_STOP_REASONS[reason] ?? reason) : reason;
}

function kwh(value: unknown): string | number {
  const text = (Number(value) / 1000).toFixed(3);
  return typeof value === 'number' ? Number(text) : text;
}

function registerOf(list: unknown): number | undefined {
  if (!Array.isArray(list)) return undefined;
  for (const entry of list as unknown[]) {
    if (!isObject(entry) || !Array.isArray(entry.sampledValue)) continue;
    for (const sample of entry.sampledValue as unknown[]) {
      if (isObject(sample) && (sample.measurand ?? REGISTER) === REGISTER)
        return Number(sample.value);
    }
  }
  return undefined;
}
