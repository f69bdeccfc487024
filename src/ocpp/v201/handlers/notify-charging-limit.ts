import { recorded } from './recorded.js';

export const notifyChargingLimit = recorded('NotifyChargingLimit');
