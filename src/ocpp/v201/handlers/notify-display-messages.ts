import { recorded } from '../../charger-state/station-notifications.js';

/** The station's display messages; the gateway never asks for them (GetDisplayMessages). */
export const notifyDisplayMessages = recorded('NotifyDisplayMessages', {});
