import { recorded } from '../../charger-state/station-notifications.js';

export const notifyEvent = recorded('NotifyEvent', {});
