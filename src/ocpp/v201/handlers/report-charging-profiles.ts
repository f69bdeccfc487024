import { recorded } from '../../charger-state/station-notifications.js';

/** The station's charging profiles; the gateway never asks for them (GetChargingProfiles). */
export const reportChargingProfiles = recorded('ReportChargingProfiles', {});
