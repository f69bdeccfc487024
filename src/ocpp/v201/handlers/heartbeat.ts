import type { Session201 } from '../connection-context.js';

export function heartbeat({ now }: Session201) {
  return { currentTime: now() };
}
