import type { Session16 } from '../session-context.js';

export function heartbeat({ now }: Session16) {
  return { currentTime: now() };
}
