import type { Roster, Driver } from './roster.js';
import { InsufficientBalanceError, type LedgerNote, type Wallet } from '../wallet/wallet.js';

/** A change that is well-formed but cannot be made; nothing was written. */
export class FleetChangeError extends Error {
  constructor(
    readonly code:
      | 'driver_not_found'
      | 'fleet_not_found'
      | 'driver_in_other_fleet'
      | 'email_taken'
      | 'fleet_not_empty'
      | 'insufficient_balance'
      | 'token_not_found'
      | 'token_bound_elsewhere',
    message: string,
  ) {
    super(message);
  }
}

export interface VehicleInput {
  model: string;
  batteryKwh: number;
}

export interface DriverChange {
  driverId: string;
  fleetId: string;
  email: string;
  /** Left out: true for a new driver, unchanged for an existing one. */
  active?: boolean | undefined;
  /** Left out: none for a new driver, unchanged for an existing one; null removes it. */
  vehicle?: VehicleInput | null | undefined;
}

export interface MoneyMoved {
  ledgerEntryId: string;
  amount: number;
  balanceAfter: number;
}

function vehicleFields(vehicle: VehicleInput | null) {
  return {
    vehicleModel: vehicle?.model ?? null,
    vehicleBatteryWh: vehicle ? Math.round(vehicle.batteryKwh * 1000) : null,
  };
}

/**
 * The roster and wallet changes that the fleet's cloud (MQTT commands) and the site's operator
 * (operator API) both make, with one set of rules: a driver never moves fleet, an email is unique
 * in its fleet, money moves once per reference and never below zero. Callers run these inside
 * their own transaction, with their own idempotency record.
 */
export class FleetChanges {
  constructor(
    private readonly roster: Roster,
    private readonly wallet: Wallet,
  ) {}

  driver(driverId: string): Driver {
    const driver = this.roster.driver(driverId);
    if (!driver) throw new FleetChangeError('driver_not_found', `no driver with id ${driverId}`);
    return driver;
  }

  /** What moveMoney did for this reference, if it ran before. */
  moneyMoved(driverId: string, reference: string): MoneyMoved | null {
    const entry = this.wallet.referencedEntry(driverId, reference);
    return entry
      ? { ledgerEntryId: entry.id, amount: entry.amount, balanceAfter: entry.balanceAfter }
      : null;
  }

  /** A top-up (> 0) or an adjustment (≠ 0) of a driver's wallet, once per reference. */
  moveMoney(
    driverId: string,
    kind: 'top_up' | 'adjustment',
    amount: number,
    reference: string,
    at: string,
    note?: LedgerNote,
  ): MoneyMoved {
    this.driver(driverId);
    this.wallet.ensureWallet(driverId, at);
    try {
      const entry = this.wallet.credit(driverId, kind, amount, reference, at, note);
      // The caller's idempotency record and the ledger's reference agree: never both.
      if (!entry) throw new Error(`ledger already holds reference ${reference}`);
      return { ledgerEntryId: entry.id, amount: entry.amount, balanceAfter: entry.balanceAfter };
    } catch (err) {
      if (err instanceof InsufficientBalanceError) {
        throw new FleetChangeError(
          'insufficient_balance',
          `balance ${err.balance} NGN cannot be debited ${err.amount} NGN`,
        );
      }
      throw err;
    }
  }

  upsertFleet(fleetId: string, name: string, at: string): { changed: boolean } {
    return { changed: this.roster.upsertFleet(fleetId, name, at) };
  }

  /**
   * An operator's fleet change: a new fleet only when `create` says so, so that a mistyped id
   * is refused rather than made (the cloud's roster, upsertFleet, creates as it always did).
   */
  putFleet(
    fleetId: string,
    name: string,
    create: boolean,
    at: string,
  ): { created: boolean; changed: boolean } {
    const exists = this.roster.hasFleet(fleetId);
    if (!exists && !create) {
      throw new FleetChangeError(
        'fleet_not_found',
        `no fleet with id ${fleetId}; send "create": true to create it`,
      );
    }
    return { created: !exists, changed: this.roster.upsertFleet(fleetId, name, at) };
  }

  deleteFleet(fleetId: string): { deleted: true } {
    const outcome = this.roster.deleteEmptyFleet(fleetId);
    if (outcome === 'not_found')
      throw new FleetChangeError('fleet_not_found', `no fleet with id ${fleetId}`);
    if (outcome === 'not_empty') {
      throw new FleetChangeError(
        'fleet_not_empty',
        `fleet ${fleetId} has drivers or API keys; only a fleet with neither can be deleted`,
      );
    }
    return { deleted: true };
  }

  upsertDriver(c: DriverChange, at: string): { created: boolean; changed: boolean } {
    if (!this.roster.hasFleet(c.fleetId))
      throw new FleetChangeError('fleet_not_found', `no fleet with id ${c.fleetId}`);
    const existing = this.roster.driver(c.driverId);
    if (existing && existing.fleetId !== c.fleetId) {
      throw new FleetChangeError(
        'driver_in_other_fleet',
        `driver ${c.driverId} belongs to fleet ${existing.fleetId}`,
      );
    }
    const sameEmail = this.roster.driverByEmail(c.fleetId, c.email);
    if (sameEmail && sameEmail.id !== c.driverId) {
      throw new FleetChangeError(
        'email_taken',
        `${c.email} is driver ${sameEmail.id} in this fleet`,
      );
    }
    const vehicle =
      c.vehicle === undefined
        ? {
            vehicleModel: existing?.vehicleModel ?? null,
            vehicleBatteryWh: existing?.vehicleBatteryWh ?? null,
          }
        : vehicleFields(c.vehicle);
    const changed = this.roster.upsertDriver(
      {
        id: c.driverId,
        fleetId: c.fleetId,
        email: c.email,
        active: c.active ?? existing?.active ?? true,
        ...vehicle,
      },
      at,
    );
    this.wallet.ensureWallet(c.driverId, at);
    return { created: !existing, changed };
  }

  deactivateDriver(driverId: string, at: string): { changed: boolean } {
    const driver = this.driver(driverId);
    return { changed: this.roster.upsertDriver({ ...driver, active: false }, at) };
  }

  assignVehicle(driverId: string, vehicle: VehicleInput | null, at: string): { changed: boolean } {
    const driver = this.driver(driverId);
    return { changed: this.roster.upsertDriver({ ...driver, ...vehicleFields(vehicle) }, at) };
  }
}
