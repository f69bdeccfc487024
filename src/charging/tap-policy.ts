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

/**
 * The balance a wallet needs for its driver's tokens to be Accepted on chargers' local lists
 * (local-lists/): the tap minimum, as an online tap needs; where chargers may start offline from
 * their lists, the offline rule's too, and none at all (listed Blocked) for a fleet that allows no
 * offline starts.
 */
export function listedMinimum(policy: TapPolicy, offlineStarts: boolean): number {
  if (!offlineStarts) return policy.minimum;
  if (!policy.offline.enabled) return Number.POSITIVE_INFINITY;
  return Math.max(policy.minimum, policy.offline.minBalance);
}
