/**
 * Meter classes (appended after the schemas before it; never edited once released):
 * - `transaction_interval_energy` keeps one sum per timing (`periodic`, `clock`, `trigger`): a
 *   charger that reports interval energy both in its periodic and in its clock-aligned samples
 *   reports the same energy twice; each timing is summed on its own (interval-energy.ts). Rows from
 *   before were one series, taken as periodic.
 * - `sessions.meter_start_unrounded`: a start register the charger wrote with a decimal fraction
 *   (a 1.6 meterStart in kWh), as written; the edge rounds it to an integer, and only the first
 *   register says which unit it was in (docs/meter-readings.md).
 */
export const migrationMeterClasses = `
CREATE TABLE transaction_interval_energy_by_timing (
  charger_id TEXT NOT NULL,
  transaction_ref TEXT NOT NULL,
  timing TEXT NOT NULL CHECK (timing IN ('periodic', 'clock', 'trigger')),
  sum_wh REAL NOT NULL CHECK (sum_wh >= 0),
  last_timestamp TEXT NOT NULL,
  PRIMARY KEY (charger_id, transaction_ref, timing)
) STRICT;
INSERT INTO transaction_interval_energy_by_timing
  SELECT charger_id, transaction_ref, 'periodic', sum_wh, last_timestamp FROM transaction_interval_energy;
DROP TABLE transaction_interval_energy;
ALTER TABLE transaction_interval_energy_by_timing RENAME TO transaction_interval_energy;

ALTER TABLE sessions ADD COLUMN meter_start_unrounded REAL;
`;
