import { recorded } from './recorded.js';

export const notifyEvent = recorded('NotifyEvent');
