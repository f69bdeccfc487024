/**
 * Schema version 5: what the money path needs to survive misbehaving chargers.
 * - A charger's register can reset when it reboots mid-session. The energy of the segments before
 *   the reset is carried (`meter_carried_wh`) and the current segment counts from
 *   `meter_segment_start_wh`, so delivered energy is neither lost nor negative. A drop is held in
 *   `meter_pending_reset_wh` until the next sample tells a reset from a glitch (meter-track.ts).
 * - `last_activity_at` is when the gateway last heard of the session's transaction: a charger that
 *   never sends its stop is settled on the last proven register after a configured silence.
 */
export const schemaV5Meter = `
ALTER TABLE sessions ADD COLUMN meter_carried_wh INTEGER NOT NULL DEFAULT 0 CHECK (meter_carried_wh >= 0);
ALTER TABLE sessions ADD COLUMN meter_segment_start_wh INTEGER;
ALTER TABLE sessions ADD COLUMN meter_pending_reset_wh INTEGER;
ALTER TABLE sessions ADD COLUMN last_activity_at TEXT;
-- Sessions open across the upgrade start their silence now, not from when they were created.
UPDATE sessions SET last_activity_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
  WHERE state IN ('charging', 'stopping');
`;
