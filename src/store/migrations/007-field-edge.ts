/**
 * What real chargers send that the OCPP edge accepts although it departs from the schema, and what
 * each charger will actually meter.
 * - `charger_deviations`: one row per charger and kind of deviation (e.g. "MeterValues
 *   meterValue[].sampledValue[].value number_as_string"), counted, with the first example kept for
 *   the operator. The operator API and metrics read it (src/ocpp/connection/deviations.ts).
 * - `charger_metering`: the measurands a charger said it will send during a transaction (read back
 *   after configuring them) and whether that includes an energy reading the gateway can settle on.
 * - `transaction_interval_energy`: for chargers that report only Energy.Active.Import.Interval,
 *   the sum of a transaction's intervals so far (the register is its start plus this sum), and the
 *   charger's timestamp of the last interval added, so a sample sent twice is not added twice.
 */
export const migrationFieldEdge = `
CREATE TABLE charger_deviations (
  charger_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  count INTEGER NOT NULL CHECK (count >= 1),
  first_seen TEXT NOT NULL,
  last_seen TEXT NOT NULL,
  example TEXT CHECK (example IS NULL OR json_valid(example)),
  PRIMARY KEY (charger_id, kind)
) STRICT;

CREATE TABLE charger_metering (
  charger_id TEXT PRIMARY KEY,
  measurands TEXT NOT NULL,
  energy TEXT NOT NULL CHECK (energy IN ('register', 'interval', 'none')),
  recorded_at TEXT NOT NULL
) STRICT;

CREATE TABLE transaction_interval_energy (
  charger_id TEXT NOT NULL,
  transaction_ref TEXT NOT NULL,
  sum_wh REAL NOT NULL CHECK (sum_wh >= 0),
  last_timestamp TEXT NOT NULL,
  PRIMARY KEY (charger_id, transaction_ref)
) STRICT;
`;
