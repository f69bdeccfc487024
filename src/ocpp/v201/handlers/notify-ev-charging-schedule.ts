import { recorded } from '../../charger-state/station-notifications.js';

/**
 * The schedule the EV chose (ISO 15118) within our limit: accepted as told. Rejected would ask the
 * EV to renegotiate, which site power has no reason to do; the limit is ours (charging profiles).
 */
export const notifyEVChargingSchedule = recorded('NotifyEVChargingSchedule', {
  status: 'Accepted',
});
