import { recorded } from './recorded.js';

export const logStatusNotification = recorded('LogStatusNotification');
