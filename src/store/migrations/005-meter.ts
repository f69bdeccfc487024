/**
 * Schema version 5: what the money path needs to survive misbehaving chargers.
 * - A charger's register can reset when it reboots mid-session. The energy of the segments before
 *   the reset is carried (`meter_carried_wh`) and the current segment counts from
 *   `meter_segment_start_wh`, so delivered energy is neither lost nor negative. A drop is held in
 *   `meter_pending_reset_wh` until the next sample tells a reset from a glitch (meter-track.ts),
 *   with the charger's timestamp of that reading (`meter_pending_reset_timestamp`): the same
 *   reading sent again (a lost reply) is not a second one, also after a gateway restart.
 * - `meter_start_sampled_at`: when the charger gave no start register and a live sample stood in
 *   for it, when that sample arrived (gateway clock). Readings the charger queued offline cannot
 *   be placed after that sample, so from then on they do not move the register.
 * - `last_activity_at` is when the gateway last heard of the session's transaction: a charger that
 *   never sends its stop is settled on the last proven register after a configured silence.
 */
export const migrationMeter = `
ALTER TABLE sessions ADD COLUMN meter_carried_wh INTEGER NOT NULL DEFAULT 0 CHECK (meter_carried_wh >= 0);
ALTER TABLE sessions ADD COLUMN meter_segment_start_wh INTEGER;
ALTER TABLE sessions ADD COLUMN meter_pending_reset_wh INTEGER;
ALTER TABLE sessions ADD COLUMN meter_pending_reset_timestamp TEXT
  CHECK ((meter_pending_reset_timestamp IS NULL) = (meter_pending_reset_wh IS NULL));
ALTER TABLE sessions ADD COLUMN meter_start_sampled_at TEXT
  CHECK (meter_start_sampled_at IS NULL OR meter_start_wh IS NOT NULL);
ALTER TABLE sessions ADD COLUMN last_activity_at TEXT;
-- Sessions open across the upgrade start their silence now, not from when they were created.
UPDATE sessions SET last_activity_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
  WHERE state IN ('charging', 'stopping');
`;
