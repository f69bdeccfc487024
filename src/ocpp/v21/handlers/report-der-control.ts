import { recorded } from '../../charger-state/station-notifications.js';

/** The station's DER controls (the answer to a GetDERControl the gateway never sends): kept. */
export const reportDERControl = recorded('ReportDERControl', {});
