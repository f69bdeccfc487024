import { recorded } from '../../charger-state/station-notifications.js';

export const notifyReport = recorded('NotifyReport', {});
