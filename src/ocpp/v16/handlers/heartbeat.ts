import type { Session16 } from '../connection-context.js';

export function heartbeat({ now }: Session16) {
  return { currentTime: now() };
}
