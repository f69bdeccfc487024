import { recorded } from '../../charger-state/station-notifications.js';

export const notifyChargingLimit = recorded('NotifyChargingLimit', {});
