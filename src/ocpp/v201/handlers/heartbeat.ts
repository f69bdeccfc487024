import type { Session201 } from '../session-context.js';

export function heartbeat({ now }: Session201) {
  return { currentTime: now() };
}
