/**
 * Which line stopped a session (docs/money.md "Which line stops a session"), kept with it at its
 * settlement (`sessions.stop_line`, its CHECK lists the same words):
 * - `station_limit`: the charger's own limit (OCPP 2.1 EnergyLimitReached / CostLimitReached);
 * - `paid_energy`: the gateway's stop at the paid energy;
 * - `operator`: an operator's stop;
 * - `driver` / `ev`: the driver at the charger or by unplugging, the EV itself;
 * - `charger`: any other reason the charger gave (a fault, a reset, its own rules);
 * - `gateway`: the gateway settled without a stop message (`no_stop_*`).
 */
export const STOP_LINES = [
  'station_limit',
  'paid_energy',
  'operator',
  'driver',
  'ev',
  'charger',
  'gateway',
] as const;
export type StopLine = (typeof STOP_LINES)[number];

/** Who asked the gateway to stop a session (session_stop_requests). */
export type StopAsker =
  { origin: 'paid_energy' } | { origin: 'operator'; operatorId: string; operatorName: string };

/** End reasons (1.6 Reason, 2.0.1/2.1 ReasonEnumType, a 2.1 limit trigger) by line. */
const STATION_LIMIT = new Set(['EnergyLimitReached', 'CostLimitReached']);
const DRIVER = new Set(['Local', 'EVDisconnected']);
const EV = new Set(['StoppedByEV', 'SOCLimitReached']);

/**
 * An operator's ask comes first (the operator may have lowered the charger's limit to stop it);
 * then the charger's end at its own limit, which came before the gateway's stop whatever the
 * gateway asked; then the gateway's paid-energy stop; then what the end reason says.
 */
export function stopLineOf(reason: string, askedBy: StopAsker['origin'] | undefined): StopLine {
  if (askedBy === 'operator') return 'operator';
  if (STATION_LIMIT.has(reason)) return 'station_limit';
  if (askedBy === 'paid_energy') return 'paid_energy';
  if (DRIVER.has(reason)) return 'driver';
  if (EV.has(reason)) return 'ev';
  if (reason.startsWith('no_stop_')) return 'gateway';
  return 'charger';
}
