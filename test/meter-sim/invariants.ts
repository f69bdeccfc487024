import { PRICE, type RunResult } from './run.js';

/** The rules every run is held to, worded as the report names them. */
export const INVARIANTS = [
  'settled once, money adds up',
  'billed ≤ delivered',
  'billed ≥ what the readings prove',
  'delivered ≤ paid + one sample',
  'not stopped before paid − one sample',
  'every frame answered',
] as const;

export type Invariant = (typeof INVARIANTS)[number];

const wh = (n: number) => `${Math.round(n)} Wh`;

/**
 * What a run broke, judged from the truth (the EV's energy, the charger's stop), never from the
 * gateway's own figures. "One sample" is the most energy that flowed between two samples the
 * charger sent, plus the meter's rounding. Billing floor: what the readings prove, up to the paid
 * energy, less the meter's rounding (RunResult.unprovenWh: before the first reading when the start
 * names no register, across a register that started again, after the last when the end names
 * none). The stop rules: the gateway cannot stop what
 * it cannot reach (bound: RunResult.stopBoundWh), and an EV that stops by itself is no early stop;
 * nor is a stop planned while the charger said nothing (its messages held back with its link up):
 * stopping on what may have been delivered, the gateway cannot know that the EV paused meanwhile.
 */
export function violations(r: RunResult): Partial<Record<Invariant, string>> {
  const found: Partial<Record<Invariant, string>> = {};
  const one = r.sampleWorthWh;
  if (r.unanswered.length > 0) found['every frame answered'] = r.unanswered.join('; ');
  if (r.startRefused !== null)
    found['not stopped before paid − one sample'] =
      `the start was answered ${r.startRefused}: the charger never charged`;
  const money: string[] = [];
  // A refused start is refunded, which is the rule for it (its charge is the loss, judged below).
  const closed = r.state === 'settled' || (r.startRefused !== null && r.state === 'refunded');
  if (!closed) money.push(`session ${r.state}, not settled`);
  if (r.cost !== null && r.credited !== null && r.cost + r.credited !== r.amount)
    money.push(`cost ${r.cost} + credited ${r.credited} ≠ ${r.amount} paid`);
  money.push(...r.ledgerProblems);
  if (money.length > 0) found['settled once, money adds up'] = money.join('; ');
  if (r.billedWh === null) return found;

  const trueCost = Math.floor((r.deliveredWh * PRICE) / 1_000_000);
  if (r.billedWh > r.deliveredWh + 0.5 || (r.cost ?? 0) > Math.max(trueCost, 0))
    found['billed ≤ delivered'] =
      `billed ${wh(r.billedWh)} (${r.cost} NGN) for ${wh(r.deliveredWh)} delivered (${trueCost} NGN)`;
  const proven = Math.min(r.deliveredWh - r.unprovenWh, r.paidWh);
  if (r.billedWh < proven - r.quantizationWh - 1)
    found['billed ≥ what the readings prove'] =
      `billed ${wh(r.billedWh)} for ${wh(r.deliveredWh)} delivered` +
      (r.unprovenWh > 0 ? ` (${wh(r.unprovenWh)} of it unproven)` : '') +
      `, paid ${wh(r.paidWh)}`;
  const atStop = r.stoppedAtWh ?? r.deliveredWh;
  if (!r.evStopped && atStop > r.stopBoundWh + one)
    found['delivered ≤ paid + one sample'] =
      (r.stoppedAtWh === null ? 'never stopped: ' : 'stop reached the charger at ') +
      `${wh(atStop)} delivered, paid ${wh(r.paidWh)}` +
      (r.stopBoundWh > r.paidWh ? ` (${wh(r.stopBoundWh)} by the time it was reachable)` : '') +
      `, one sample ${wh(one)}`;
  if (r.stoppedAtWh !== null && !r.evStopped && !r.stoppedUnheard && r.stoppedAtWh < r.paidWh - one)
    found['not stopped before paid − one sample'] =
      `stopped at ${wh(r.stoppedAtWh)} of ${wh(r.paidWh)} paid, one sample ${wh(one)}`;
  return found;
}
