/**
 * Schema version 1. Invariants live here where SQL can hold them:
 * - money is INTEGER whole NGN; a wallet balance can never go below zero;
 * - a wallet's balance moves only through ledger_entries (the AFTER INSERT trigger applies the
 *   entry and insists that balance_after is what the wallet now holds), and the ledger is append-only;
 * - a session has at most one debit and exactly one outcome (a refund or a settlement credit),
 *   never more than it was debited, and a terminal state never changes again;
 * - a connector has at most one open session.
 */
export const migrationV1 = `
CREATE TABLE fleets (
  id TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 64),
  name TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;

CREATE TABLE api_keys (
  key_hash TEXT PRIMARY KEY CHECK (length(key_hash) = 64),
  fleet_id TEXT NOT NULL REFERENCES fleets(id),
  label TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX api_keys_fleet ON api_keys(fleet_id);

CREATE TABLE drivers (
  id TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 64),
  fleet_id TEXT NOT NULL REFERENCES fleets(id),
  email TEXT NOT NULL CHECK (email = lower(trim(email)) AND length(email) BETWEEN 3 AND 254),
  active INTEGER NOT NULL CHECK (active IN (0, 1)),
  vehicle_model TEXT,
  vehicle_battery_wh INTEGER CHECK (vehicle_battery_wh > 0),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (fleet_id, email)
) STRICT;
CREATE INDEX drivers_email ON drivers(email);

CREATE TABLE wallets (
  driver_id TEXT PRIMARY KEY REFERENCES drivers(id),
  balance INTEGER NOT NULL DEFAULT 0 CHECK (balance >= 0),
  updated_at TEXT NOT NULL
) STRICT;
CREATE TRIGGER wallets_no_delete BEFORE DELETE ON wallets
BEGIN SELECT RAISE(ABORT, 'wallets are never deleted'); END;

CREATE TABLE driver_tokens (
  token_hash TEXT PRIMARY KEY CHECK (length(token_hash) = 64),
  driver_id TEXT NOT NULL REFERENCES drivers(id),
  expires_at_ms INTEGER NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX driver_tokens_expiry ON driver_tokens(expires_at_ms);

CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  driver_id TEXT NOT NULL REFERENCES drivers(id),
  charger_id TEXT NOT NULL,
  connector_id TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('authorizing', 'authorized', 'charging', 'stopping', 'settled', 'refunded')),
  amount INTEGER NOT NULL CHECK (amount > 0),
  price_micro_ngn_per_wh INTEGER NOT NULL CHECK (price_micro_ngn_per_wh > 0),
  limit_wh INTEGER NOT NULL CHECK (limit_wh > 0),
  id_token TEXT NOT NULL UNIQUE,
  transaction_ref TEXT,
  meter_start_wh INTEGER,
  last_meter_wh INTEGER,
  delivered_wh INTEGER CHECK (delivered_wh >= 0),
  cost INTEGER CHECK (cost >= 0 AND cost <= amount),
  credited INTEGER CHECK (credited >= 0),
  end_reason TEXT,
  created_at TEXT NOT NULL,
  authorized_at TEXT,
  started_at TEXT,
  stop_requested_at TEXT,
  ended_at TEXT,
  UNIQUE (charger_id, transaction_ref),
  CHECK ((state = 'settled') = (cost IS NOT NULL AND delivered_wh IS NOT NULL AND credited IS NOT NULL)),
  CHECK (cost IS NULL OR credited = amount - cost)
) STRICT;
CREATE UNIQUE INDEX sessions_one_open_per_connector ON sessions(charger_id, connector_id)
  WHERE state IN ('authorizing', 'authorized', 'charging', 'stopping');
CREATE INDEX sessions_driver ON sessions(driver_id);
CREATE INDEX sessions_open ON sessions(state)
  WHERE state IN ('authorizing', 'authorized', 'charging', 'stopping');
CREATE TRIGGER sessions_terminal_is_final BEFORE UPDATE ON sessions
WHEN OLD.state IN ('settled', 'refunded')
BEGIN SELECT RAISE(ABORT, 'a settled or refunded session never changes'); END;
CREATE TRIGGER sessions_no_delete BEFORE DELETE ON sessions
BEGIN SELECT RAISE(ABORT, 'sessions are never deleted'); END;

CREATE TABLE ledger_entries (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  driver_id TEXT NOT NULL REFERENCES wallets(driver_id),
  kind TEXT NOT NULL CHECK (kind IN ('opening', 'top_up', 'adjustment', 'session_debit', 'session_refund', 'session_credit')),
  amount INTEGER NOT NULL,
  balance_after INTEGER NOT NULL CHECK (balance_after >= 0),
  session_id TEXT REFERENCES sessions(id),
  reference TEXT,
  created_at TEXT NOT NULL,
  CHECK (
    (kind = 'session_debit' AND amount < 0 AND session_id IS NOT NULL) OR
    (kind = 'session_refund' AND amount > 0 AND session_id IS NOT NULL) OR
    (kind = 'session_credit' AND amount >= 0 AND session_id IS NOT NULL) OR
    (kind IN ('opening', 'top_up') AND amount > 0 AND session_id IS NULL) OR
    (kind = 'adjustment' AND amount <> 0 AND session_id IS NULL)
  )
) STRICT;
CREATE UNIQUE INDEX ledger_one_kind_per_session ON ledger_entries(session_id, kind)
  WHERE session_id IS NOT NULL;
CREATE UNIQUE INDEX ledger_one_opening_per_wallet ON ledger_entries(driver_id) WHERE kind = 'opening';
CREATE UNIQUE INDEX ledger_reference_once ON ledger_entries(driver_id, reference)
  WHERE reference IS NOT NULL;
CREATE INDEX ledger_driver ON ledger_entries(driver_id, seq);

CREATE TRIGGER ledger_single_outcome BEFORE INSERT ON ledger_entries
WHEN NEW.kind IN ('session_refund', 'session_credit') AND EXISTS (
  SELECT 1 FROM ledger_entries WHERE session_id = NEW.session_id AND kind IN ('session_refund', 'session_credit'))
BEGIN SELECT RAISE(ABORT, 'the session already has its outcome'); END;

CREATE TRIGGER ledger_outcome_within_debit BEFORE INSERT ON ledger_entries
WHEN NEW.kind IN ('session_refund', 'session_credit') AND NEW.amount > COALESCE(
  (SELECT -amount FROM ledger_entries WHERE session_id = NEW.session_id AND kind = 'session_debit'), 0)
BEGIN SELECT RAISE(ABORT, 'a session outcome cannot exceed its debit'); END;

CREATE TRIGGER ledger_apply AFTER INSERT ON ledger_entries
BEGIN
  UPDATE wallets SET balance = balance + NEW.amount, updated_at = NEW.created_at
    WHERE driver_id = NEW.driver_id;
  SELECT RAISE(ABORT, 'balance_after does not match the wallet balance')
    WHERE (SELECT balance FROM wallets WHERE driver_id = NEW.driver_id) IS NOT NEW.balance_after;
END;
CREATE TRIGGER ledger_no_update BEFORE UPDATE ON ledger_entries
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
CREATE TRIGGER ledger_no_delete BEFORE DELETE ON ledger_entries
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;

CREATE TRIGGER sessions_outcome_needs_entry AFTER UPDATE OF state ON sessions
WHEN NEW.state IN ('settled', 'refunded') AND NOT EXISTS (
  SELECT 1 FROM ledger_entries WHERE session_id = NEW.id
    AND kind = CASE NEW.state WHEN 'settled' THEN 'session_credit' ELSE 'session_refund' END)
BEGIN SELECT RAISE(ABORT, 'a session outcome needs its ledger entry'); END;

CREATE TABLE outbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  topic TEXT NOT NULL,
  payload TEXT NOT NULL CHECK (json_valid(payload)),
  created_at TEXT NOT NULL,
  sent_at TEXT
) STRICT;
CREATE INDEX outbox_unsent ON outbox(seq) WHERE sent_at IS NULL;

CREATE TABLE connector_state (
  charger_id TEXT NOT NULL,
  connector_id TEXT NOT NULL,
  status TEXT NOT NULL,
  error_code TEXT,
  status_at TEXT,
  soc_percent REAL CHECK (soc_percent BETWEEN 0 AND 100),
  soc_at TEXT,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (charger_id, connector_id)
) STRICT;

CREATE TABLE charger_info (
  charger_id TEXT PRIMARY KEY,
  protocol TEXT NOT NULL,
  vendor TEXT,
  model TEXT,
  serial_number TEXT,
  firmware_version TEXT,
  booted_at TEXT,
  last_seen_at TEXT NOT NULL
) STRICT;

CREATE TABLE ocpp_events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  charger_id TEXT NOT NULL,
  action TEXT NOT NULL,
  note TEXT NOT NULL,
  payload TEXT CHECK (payload IS NULL OR json_valid(payload)),
  at TEXT NOT NULL
) STRICT;
CREATE INDEX ocpp_events_charger ON ocpp_events(charger_id, seq);

CREATE TABLE ocpp16_transactions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  charger_id TEXT NOT NULL,
  connector INTEGER NOT NULL,
  id_tag TEXT NOT NULL,
  meter_start INTEGER NOT NULL,
  started_at TEXT NOT NULL,
  accepted INTEGER NOT NULL CHECK (accepted IN (0, 1)),
  meter_stop INTEGER,
  stopped_at TEXT,
  stop_reason TEXT,
  UNIQUE (charger_id, connector, id_tag, started_at)
) STRICT;
`;
