import type { ConnectionContext201 } from '../connection-context.js';

export function heartbeat({ now }: ConnectionContext201) {
  return { currentTime: now() };
}
