import { recorded } from '../../charger-state/station-notifications.js';

/** An external limit (a grid operator's, an EMS's) was lifted; site power does not use them. */
export const clearedChargingLimit = recorded('ClearedChargingLimit', {});
