import { recorded } from './recorded.js';

export const notifyReport = recorded('NotifyReport');
