/**
 * Schema version 2: OCPP 2.0.1. The charger names its own transaction ids there, so instead of
 * handing ids out (1.6) the gateway remembers every transaction it hears of and every
 * TransactionEvent by sequence number, which is what makes replays and out-of-order deliveries
 * harmless. Also: the battery capacity an ISO 15118 charger reports for the plugged-in vehicle.
 */
export const migrationOcpp201 = `
ALTER TABLE connector_state ADD COLUMN battery_wh INTEGER CHECK (battery_wh IS NULL OR battery_wh > 0);

CREATE TABLE ocpp201_remote_starts (
  remote_start_id INTEGER PRIMARY KEY AUTOINCREMENT,
  charger_id TEXT NOT NULL,
  evse_id INTEGER NOT NULL CHECK (evse_id > 0),
  id_token TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL
) STRICT;

CREATE TABLE ocpp201_transactions (
  charger_id TEXT NOT NULL,
  transaction_id TEXT NOT NULL,
  evse_id INTEGER,
  id_token TEXT,
  meter_start_wh INTEGER,
  -- What we answered for the transaction's token, once we answered: a replay gets the same answer.
  verdict TEXT CHECK (verdict IN ('accepted', 'invalid')),
  ended_at TEXT,
  meter_stop_wh INTEGER,
  stopped_reason TEXT,
  first_seen_at TEXT NOT NULL,
  PRIMARY KEY (charger_id, transaction_id)
) STRICT;

CREATE TABLE ocpp201_transaction_events (
  charger_id TEXT NOT NULL,
  transaction_id TEXT NOT NULL,
  seq_no INTEGER NOT NULL,
  event_type TEXT NOT NULL CHECK (event_type IN ('Started', 'Updated', 'Ended')),
  trigger_reason TEXT NOT NULL,
  offline INTEGER NOT NULL CHECK (offline IN (0, 1)),
  timestamp TEXT NOT NULL,
  received_at TEXT NOT NULL,
  PRIMARY KEY (charger_id, transaction_id, seq_no),
  FOREIGN KEY (charger_id, transaction_id) REFERENCES ocpp201_transactions (charger_id, transaction_id)
) STRICT;
`;
