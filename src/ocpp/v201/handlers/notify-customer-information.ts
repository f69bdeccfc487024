import { recorded } from '../../charger-state/station-notifications.js';

/** Customer data the station holds; the gateway never asks for it (CustomerInformation). */
export const notifyCustomerInformation = recorded('NotifyCustomerInformation', {});
