import { recorded } from '../../charger-state/station-notifications.js';

/** Progress of a signed firmware update (1.6 security whitepaper); the gateway sends UpdateFirmware. */
export const signedFirmwareStatusNotification = recorded('SignedFirmwareStatusNotification', {});
