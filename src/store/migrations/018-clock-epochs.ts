/**
 * Schema for charger clock epochs (appended after the schemas before it; never edited once
 * released). A charger's clock changes epoch when it steps (src/ocpp/charger-state/charger-clocks.ts): between
 * two stamps of one epoch, their difference is the time between them.
 * - charger_clock_offsets.epoch: the epoch the stored offset belongs to (when it began, ms).
 * - sessions.meter_last_stamp_ms / meter_last_epoch: the charger's stamp of the last counted
 *   register and its epoch, so the next gain's time can be read on the charger's own clock
 *   (src/charging/meter-track.ts) also after a restart.
 */
export const migrationClockEpochs = `
ALTER TABLE charger_clock_offsets ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN meter_last_stamp_ms INTEGER;
ALTER TABLE sessions ADD COLUMN meter_last_epoch INTEGER;
`;
