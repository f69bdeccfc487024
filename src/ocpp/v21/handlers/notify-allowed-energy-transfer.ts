import { recorded } from '../../charger-state/station-notifications.js';

/**
 * The energy transfer modes (charging only, bidirectional, …) the transaction may now use, told
 * by the station: Accepted and kept. The gateway sells charging only; its charging profiles never
 * ask for discharge, whatever modes the EV allows.
 */
export const notifyAllowedEnergyTransfer = recorded('NotifyAllowedEnergyTransfer', {
  status: 'Accepted',
});
