/**
 * A 2.0.1 transaction gets a small integer key, and its events are kept under (key, seqNo) in one
 * b-tree (WITHOUT ROWID). Before, every event carried the charger's id and the charger's
 * transaction id (up to 36 characters) in its table, its primary key and a `received_at` index:
 * a meter sample of one of many transactions running side by side wrote about 4.5 pages of 1 KiB
 * there, where now it writes about one. The transaction's key is its rowid made explicit (an
 * INTEGER PRIMARY KEY, which VACUUM keeps), so the rows keep the order LATEST_ON_EVSE reads; the
 * charger's ids stay unique. Retention walks the events in key order, which is the order the
 * transactions were first heard of (store/retention.ts). Existing rows are carried over.
 */
export const migrationOcpp201EventKeys = `
ALTER TABLE ocpp201_transactions RENAME TO ocpp201_transactions_before_keys;
ALTER TABLE ocpp201_transaction_events RENAME TO ocpp201_transaction_events_before_keys;

CREATE TABLE ocpp201_transactions (
  tx_key INTEGER PRIMARY KEY,
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
  UNIQUE (charger_id, transaction_id)
) STRICT;
INSERT INTO ocpp201_transactions (tx_key, charger_id, transaction_id, evse_id, id_token,
    meter_start_wh, verdict, ended_at, meter_stop_wh, stopped_reason, first_seen_at)
  SELECT rowid, charger_id, transaction_id, evse_id, id_token, meter_start_wh, verdict, ended_at,
    meter_stop_wh, stopped_reason, first_seen_at
  FROM ocpp201_transactions_before_keys ORDER BY rowid;

CREATE TABLE ocpp201_transaction_events (
  tx_key INTEGER NOT NULL REFERENCES ocpp201_transactions (tx_key),
  seq_no INTEGER NOT NULL,
  event_type TEXT NOT NULL CHECK (event_type IN ('Started', 'Updated', 'Ended')),
  trigger_reason TEXT NOT NULL,
  offline INTEGER NOT NULL CHECK (offline IN (0, 1)),
  timestamp TEXT NOT NULL,
  received_at TEXT NOT NULL,
  PRIMARY KEY (tx_key, seq_no)
) STRICT, WITHOUT ROWID;
INSERT INTO ocpp201_transaction_events (tx_key, seq_no, event_type, trigger_reason, offline,
    timestamp, received_at)
  SELECT t.tx_key, e.seq_no, e.event_type, e.trigger_reason, e.offline, e.timestamp, e.received_at
  FROM ocpp201_transaction_events_before_keys e JOIN ocpp201_transactions t
    ON t.charger_id = e.charger_id AND t.transaction_id = e.transaction_id;

DROP TABLE ocpp201_transaction_events_before_keys;
DROP TABLE ocpp201_transactions_before_keys;

CREATE INDEX ocpp201_transactions_by_evse ON ocpp201_transactions (charger_id, evse_id);
CREATE TRIGGER ocpp201_transaction_events_kept_while_open
BEFORE DELETE ON ocpp201_transaction_events
WHEN EXISTS (SELECT 1 FROM ocpp201_transactions t JOIN sessions s
    ON s.charger_id = t.charger_id AND s.transaction_ref = t.transaction_id
  WHERE t.tx_key = OLD.tx_key AND s.state IN ('authorizing', 'authorized', 'charging', 'stopping'))
BEGIN SELECT RAISE(ABORT, 'the events of an open session''s transaction are kept'); END;
`;
