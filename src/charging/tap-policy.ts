import type { GatewayConfig } from '../config/schema.js';

/** A fleet's tap policy, its fields merged over the default (config `taps`). */
export interface TapPolicy {
  mode: 'fixed' | 'quote';
  /** `fixed`: NGN debited per tap; `quote`: what is debited when no quote can be made. */
  amount: number;
  /** The least a tap may debit: a wallet that cannot pay it is refused (no_credit). */
  minimum: number;
  offline: {
    /** Whether the fleet's cards may be kept in chargers' local lists. */
    enabled: boolean;
    /** The least balance a wallet holds while its cards are listed (with `minimum`). */
    minBalance: number;
  };
}

/** The policies of every fleet, read once from the config. */
export class TapPolicies {
  constructor(private readonly config: GatewayConfig['taps']) {}

  of(fleetId: string): TapPolicy {
    const base = this.config.default;
    const own = this.config.fleets[fleetId];
    if (!own) return base;
    return {
      mode: own.mode ?? base.mode,
      amount: own.amount ?? base.amount,
      minimum: own.minimum ?? base.minimum,
      offline: {
        enabled: own.offline?.enabled ?? base.offline.enabled,
        minBalance: own.offline?.minBalance ?? base.offline.minBalance,
      },
    };
  }
}

/** What a tap would debit, or why none. */
export type TapAmount = { amount: number } | { refused: 'no_credit'; reason: string };

/**
 * The amount of an online tap: the policy's (`quoted`, the full quote for the plugged vehicle, in
 * quote mode when there is one), never above the balance or `maxAmount`; refused below the minimum.
 */
export function tapAmount(
  policy: TapPolicy,
  balance: number,
  maxAmount: number,
  quoted: number | null,
): TapAmount {
  const wanted = policy.mode === 'quote' && quoted !== null ? quoted : policy.amount;
  const amount = Math.min(wanted, balance, maxAmount);
  if (balance < policy.minimum || amount < policy.minimum) {
    return {
      refused: 'no_credit',
      reason: `a tap needs at least ${policy.minimum} NGN; the wallet holds ${balance} NGN`,
    };
  }
  return { amount };
}

/**
 * The amount debited for a start the charger made offline and reports late: the energy has
 * flowed, so no minimum applies; whatever the wallet holds, up to the policy's amount. Zero when
 * the wallet is empty (nothing can be debited: the whole start is the operator's loss).
 */
export function offlineTapAmount(
  policy: TapPolicy,
  balance: number,
  maxAmount: number,
  quoted: number | null,
): number {
  const wanted = policy.mode === 'quote' && quoted !== null ? quoted : policy.amount;
  return Math.max(0, Math.min(wanted, balance, maxAmount));
}

/** Whether a driver's cards may be in chargers' local lists now, and why not. */
export interface OfflineExposure {
  listable: boolean;
  reason: string | null;
  balance: number;
  /** The least balance the fleet's policy asks of a listed wallet. */
  minBalance: number;
}

/**
 * The offline rule (docs/money.md "Offline starts"): a card may start a charger offline only while
 * its fleet allows it and its wallet holds at least the larger of the tap minimum and the offline
 * `minBalance`. Energy an offline start delivers beyond what the wallet holds when it is reported
 * is the operator's loss: `minBalance` is what each listed card is trusted for.
 */
export function offlineExposure(
  policy: TapPolicy,
  driverActive: boolean,
  balance: number,
): OfflineExposure {
  const minBalance = Math.max(policy.minimum, policy.offline.minBalance);
  const base = { balance, minBalance };
  if (!policy.offline.enabled)
    return { ...base, listable: false, reason: 'offline starts are disabled for the fleet' };
  if (!driverActive) return { ...base, listable: false, reason: 'the driver is not active' };
  if (balance < minBalance) {
    return {
      ...base,
      listable: false,
      reason: `the wallet holds ${balance} NGN, below the ${minBalance} NGN a listed card needs`,
    };
  }
  return { ...base, listable: true, reason: null };
}
