import { recorded } from '../../charger-state/station-notifications.js';

/**
 * A battery swap station's batteries going in or out: the gateway sells charging, not swaps, and
 * never asks for one (RequestBatterySwap), so the event is kept for the operator and bills nothing.
 */
export const batterySwap = recorded('BatterySwap', {});
