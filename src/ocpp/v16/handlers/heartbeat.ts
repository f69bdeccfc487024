import type { ConnectionContext16 } from '../connection-context.js';

export function heartbeat({ now }: ConnectionContext16) {
  return { currentTime: now() };
}
