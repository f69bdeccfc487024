import { recorded } from '../../charger-state/station-notifications.js';

/**
 * The station turned priority charging on or off for a transaction (a UsePriorityCharging the
 * gateway never sends, or the station's own button): kept for the operator; what a session may
 * draw is still the gateway's paid energy and site power's limit.
 */
export const notifyPriorityCharging = recorded('NotifyPriorityCharging', {});
