/**
 * The power a session's charger accepted as its ceiling, as the site's power manager holds it.
 * Charging reads it (the paid-energy stop plans with it) and subscribes to its changes; the power
 * manager implements it and knows nothing of who listens.
 */
export interface PowerAllowance {
  /** W, on the meter's time base; null when nothing limits the session now. */
  allowedPowerW(sessionId: string): number | null;
  /** Calls `changed` when a charger accepted a new allowance for a session; returns the unsubscribe. */
  onChange(changed: (sessionId: string) => void): () => void;
}

/**
 * The allowance on the meter's time base: a simulator at time factor N delivers N × its
 * allowance per second (simulation.timeFactor; 1 for real chargers).
 */
export function scaledAllowance(allowance: PowerAllowance, timeFactor: number): PowerAllowance {
  return {
    allowedPowerW: (sessionId) => {
      const w = allowance.allowedPowerW(sessionId);
      return w === null ? null : w * timeFactor;
    },
    onChange: (changed) => allowance.onChange(changed),
  };
}
