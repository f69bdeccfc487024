/**
 * The paid limit handed to the station (OCPP 2.1) and which line stopped each session:
 * - `sessions.stop_line`: set at settlement (charging/stop-line.ts): the station's own limit,
 *   the gateway's paid-energy stop, an operator, the driver, the EV, the charger otherwise (a
 *   fault, its own reasons) or the gateway settling without a stop; `stop_line_gap_wh`: when the
 *   station's limit ended it, the energy it delivered less the paid energy (negative: short).
 * - `ocpp21_transaction_limits`: per 2.1 transaction, the limit the gateway holds for it, the one
 *   it last sent in a TransactionEvent answer, the one the station confirmed (`LimitSet`), and
 *   its answer to the session's tariff (ChangeTransactionTariff).
 * - `station_cost_differences`: a cost the station computed itself that differs from the
 *   gateway's for the same energy beyond rounding (docs/money.md); never billed.
 */
export const migrationStationLimits = `
ALTER TABLE sessions ADD COLUMN stop_line TEXT
  CHECK (stop_line IN ('station_limit', 'paid_energy', 'operator', 'driver', 'ev', 'charger', 'gateway'));
ALTER TABLE sessions ADD COLUMN stop_line_gap_wh INTEGER
  CHECK (stop_line_gap_wh IS NULL OR stop_line = 'station_limit');

CREATE TABLE ocpp21_transaction_limits (
  charger_id TEXT NOT NULL,
  transaction_id TEXT NOT NULL,
  evse_id INTEGER,
  energy_wh INTEGER NOT NULL CHECK (energy_wh >= 0),
  cost_ngn INTEGER NOT NULL CHECK (cost_ngn >= 0),
  micro_ngn_per_wh INTEGER CHECK (micro_ngn_per_wh > 0),
  tariff_id TEXT,
  tariff_status TEXT,
  sent_energy_wh INTEGER,
  sent_cost_ngn INTEGER,
  sent_at TEXT,
  confirmed_energy_wh REAL,
  confirmed_cost_ngn REAL,
  confirmed_at TEXT,
  PRIMARY KEY (charger_id, transaction_id)
) STRICT;

CREATE TABLE station_cost_differences (
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  kind TEXT NOT NULL CHECK (kind IN ('running', 'final')),
  energy_wh INTEGER NOT NULL CHECK (energy_wh >= 0),
  station_ngn REAL NOT NULL,
  gateway_ngn INTEGER NOT NULL,
  at TEXT NOT NULL,
  UNIQUE (session_id, kind)
) STRICT;
`;
