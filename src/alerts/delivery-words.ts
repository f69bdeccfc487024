import type { AlertEventType } from './alert.js';

/** An event's webhook delivery as the API answers it (`Delivery` in deliveries.ts). */
export interface DeliveryState {
  eventId: string;
  type: AlertEventType;
  attempts: number;
  lastError: string | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  givenUpAt: string | null;
  waitingBehind: number;
}

/**
 * One event's delivery in a few words, for the CLI and the console (each with its own way of
 * showing a time; no dependencies, the console bundles it): delivered, given up, or waiting.
 */
export function deliveryWords(d: DeliveryState, time: (iso: string) => string): string {
  const tries = `${d.attempts} ${d.attempts === 1 ? 'attempt' : 'attempts'}`;
  if (d.deliveredAt) return `delivered ${time(d.deliveredAt)} (${tries})`;
  if (d.givenUpAt) return `given up ${time(d.givenUpAt)} (${tries}, ${d.lastError ?? 'no error'})`;
  const behind = d.waitingBehind > 0 ? `, behind ${d.waitingBehind} older` : '';
  const last = d.lastError ? `, last ${d.lastError}` : '';
  const next = d.nextAttemptAt ? `, next ${time(d.nextAttemptAt)}` : '';
  return `waiting (${tries}${last}${behind}${next})`;
}
