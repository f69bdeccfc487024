import type { MeterReading } from './meter-reading.js';
import {
  advanceSoc,
  chargingPowerW,
  meteredEnergyWh,
  secondsUntilFull,
  secondsUntilSoc,
  socGainOf,
} from './vehicle-physics.js';
import type { ChargeCurve } from './vehicle-physics.js';

export interface VehicleSpec {
  model: string;
  batteryKwh: number;
  socPercent: number;
  maxPowerW: number;
  /**
   * The EV's communication controller MAC (ISO 15118 / DIN EVCCID), 12 hex digits, ':' or '-'
   * between bytes allowed: a charger with AutoCharge identifies the vehicle by it at plug-in.
   */
  macAddress?: string;
}

const MAC_ADDRESS = /^[0-9A-Fa-f]{2}(?:[:-]?[0-9A-Fa-f]{2}){5}$/;

/** The MAC's 12 hex digits in upper case, as the charger's ISO 15118 stack reads them. */
export function macHex(mac: string): string {
  return mac.replace(/[:-]/g, '').toUpperCase();
}

export function validateVehicle(vehicle: VehicleSpec): void {
  if (vehicle.macAddress !== undefined && !MAC_ADDRESS.test(vehicle.macAddress)) {
    throw new RangeError('vehicle macAddress must be 6 bytes of hex (00:23:A7:F1:C2:D4)');
  }
  if (!(vehicle.batteryKwh > 0)) throw new RangeError('vehicle batteryKwh must be > 0');
  if (!(vehicle.maxPowerW > 0)) throw new RangeError('vehicle maxPowerW must be > 0');
  if (!(vehicle.socPercent >= 0 && vehicle.socPercent <= 100)) {
    throw new RangeError('vehicle socPercent must be within 0..100');
  }
}

/**
 * The physical side of one charging outlet (a 1.6 connector, a 2.0.1 EVSE): the plugged
 * vehicle, its state of charge and the energy register. Whether energy may flow is the protocol
 * layer's decision (transaction, status); every change to an input of that decision must call
 * accrue() first, so that a state change never loses or invents energy.
 */
export abstract class MeteredOutlet {
  private powered = true;
  private vehicleSpec?: VehicleSpec;
  private soc = 0;
  private registerExactWh: number;
  // A charging profile's limit (W); undefined: none.
  private profileLimitW?: number;
  // The register (exact Wh) at which the charger itself opens the power path; undefined: none.
  private energyCapWh?: number;
  // Simulated seconds during which energy flowed, over the outlet's life.
  private chargingSimSeconds = 0;
  // Monotonic clock, so wall-clock adjustments cannot create or destroy energy.
  private lastAccrualMs = performance.now();

  constructor(
    readonly id: number,
    meterStartWh: number,
    private readonly chargerMaxPowerW: number,
    private readonly timeFactor: number,
  ) {
    this.registerExactWh = meterStartWh;
  }

  /** A transaction runs (the charger then offers its power). */
  protected abstract get inTransaction(): boolean;

  /** The protocol state lets energy flow (e.g. an authorized transaction that is Charging). */
  protected abstract get chargingAllowed(): boolean;

  get vehicle(): VehicleSpec | undefined {
    return this.vehicleSpec;
  }

  get socPercent(): number | undefined {
    return this.vehicleSpec ? this.soc : undefined;
  }

  /** Integer Wh as the meter displays it; flooring keeps it monotonic. */
  get registerWh(): number {
    return Math.floor(this.registerExactWh);
  }

  get isFull(): boolean {
    return this.vehicleSpec !== undefined && this.soc >= 100;
  }

  get delivering(): boolean {
    return (
      this.powered &&
      this.vehicleSpec !== undefined &&
      this.chargingAllowed &&
      this.soc < 100 &&
      this.profileLimitW !== 0 &&
      !this.energyCapReached
    );
  }

  /** The register reached the cap the charger set itself (an energy limit it enforces). */
  get energyCapReached(): boolean {
    return this.energyCapWh !== undefined && this.registerExactWh >= this.energyCapWh;
  }

  /**
   * The charger stops the energy itself when the register reaches `registerWh` (checked as the
   * energy flows, so no sample interval or timer delay lets more through); undefined: no cap.
   */
  capEnergy(registerWh: number | undefined): void {
    this.accrue();
    this.energyCapWh = registerWh;
  }

  /** Simulated seconds during which energy flowed, over the outlet's life. */
  get chargingSeconds(): number {
    return this.chargingSimSeconds;
  }

  /** Simulated seconds until the register reaches `registerWh` at the current rate, if flowing. */
  simSecondsUntilRegister(registerWh: number): number | undefined {
    const curve = this.curve();
    if (!this.delivering || !curve) return undefined;
    const energyWh = registerWh - this.registerExactWh;
    if (energyWh <= 0) return 0;
    return secondsUntilSoc(curve, this.soc, this.soc + socGainOf(curve, energyWh));
  }

  /** The register to a tenth of a Wh, as a meter with a decimal display shows it. */
  get registerTenthsWh(): number {
    return Math.floor(this.registerExactWh * 10) / 10;
  }

  /** A charging profile limits the power (0 stops energy); undefined lifts the limit. */
  limitPower(limitW: number | undefined): void {
    this.accrue();
    this.profileLimitW = limitW === undefined ? undefined : Math.max(0, limitW);
  }

  /** The limit the charging profiles set, W; undefined: none. */
  get powerLimitW(): number | undefined {
    return this.profileLimitW;
  }

  get powerW(): number {
    const curve = this.curve();
    return this.delivering && curve ? chargingPowerW(curve, this.soc) : 0;
  }

  get offeredW(): number {
    return this.inTransaction ? this.chargerMaxPowerW : 0;
  }

  /** Integrates energy flow from the previous call up to nowMs (performance.now() clock). */
  accrue(nowMs = performance.now()): void {
    const elapsedSimSeconds = ((nowMs - this.lastAccrualMs) / 1000) * this.timeFactor;
    this.lastAccrualMs = Math.max(this.lastAccrualMs, nowMs);
    const curve = this.curve();
    if (!this.delivering || !curve || elapsedSimSeconds <= 0) return;
    let nextSoc = advanceSoc(curve, this.soc, elapsedSimSeconds);
    const energyWh = meteredEnergyWh(curve, nextSoc - this.soc);
    const cap = this.energyCapWh;
    // The cap opens the power path at the cap's register exactly, wherever the accrual falls.
    const capped = cap !== undefined && this.registerExactWh + energyWh >= cap;
    if (capped) nextSoc = this.soc + socGainOf(curve, cap - this.registerExactWh);
    this.chargingSimSeconds += Math.min(
      elapsedSimSeconds,
      secondsUntilSoc(curve, this.soc, nextSoc),
    );
    this.registerExactWh = capped ? cap : this.registerExactWh + energyWh;
    this.soc = nextSoc;
  }

  /** Simulated seconds until the vehicle is full at the current rate, if energy is flowing. */
  simSecondsUntilFull(): number | undefined {
    const curve = this.curve();
    if (!this.delivering || !curve) return undefined;
    return secondsUntilFull(curve, this.soc);
  }

  /** Without power no energy flows, whatever the protocol state says. */
  setPowered(powered: boolean): void {
    this.accrue();
    this.powered = powered;
  }

  plug(vehicle: VehicleSpec): void {
    this.accrue();
    this.vehicleSpec = { ...vehicle };
    this.soc = vehicle.socPercent;
  }

  unplug(): void {
    this.accrue();
    this.vehicleSpec = undefined;
  }

  reading(nowMs = performance.now()): MeterReading {
    this.accrue(nowMs);
    const reading: MeterReading = {
      registerWh: this.registerWh,
      powerW: this.powerW,
      offeredW: this.offeredW,
    };
    if (this.vehicleSpec) reading.socPercent = this.soc;
    return reading;
  }

  private curve(): ChargeCurve | undefined {
    if (!this.vehicleSpec) return undefined;
    const limit = this.profileLimitW;
    return {
      chargerMaxPowerW:
        limit === undefined || limit <= 0
          ? this.chargerMaxPowerW
          : Math.min(limit, this.chargerMaxPowerW),
      vehicleMaxPowerW: this.vehicleSpec.maxPowerW,
      batteryKwh: this.vehicleSpec.batteryKwh,
    };
  }
}
