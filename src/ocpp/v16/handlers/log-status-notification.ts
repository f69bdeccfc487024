import { recorded } from '../../charger-state/station-notifications.js';

/** Progress of a GetLog (1.6 security whitepaper); the gateway asks 1.6 chargers by GetDiagnostics. */
export const logStatusNotification = recorded('LogStatusNotification', {});
