import { recorded } from '../../charger-state/station-notifications.js';

/** The station's variable monitors; the gateway sets none. */
export const notifyMonitoringReport = recorded('NotifyMonitoringReport', {});
