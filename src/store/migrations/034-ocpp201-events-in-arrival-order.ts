/**
 * 2.0.1 events in arrival order: a rowid table (`event_id`, an INTEGER PRIMARY KEY, which VACUUM
 * keeps), so each new event is appended at the right end of its b-tree, where SQLite splits a
 * full leaf the cheap way (a new leaf and its parent, the full one left as it was). Keyed by
 * `(tx_key, seq_no)` they went in the middle of a WITHOUT ROWID b-tree, and a 2.0.1 sample wrote
 * its transaction's leaf and, every few samples, a split of it and its neighbours
 * (docs/benchmarks.md, "Bytes written to the disk").
 *
 * No index is written with them. A transaction's events lie between `first_event_id` (set when
 * its row is made: no event of it can come before) and `last_event_id` (set by its Ended event
 * and moved over any event heard after; NULL: up to the table's end), so the rare reads by
 * transaction (the replay check's fallback, the operator's session view) scan only the events
 * heard while it ran (src/ocpp/v201/transactions.ts). `seq_no_above` is raised only by an event
 * that arrives below the transaction's highest seqNo: with its last-arrived event it gives, after
 * a restart, a seqNo no event of it is above. Retention never deletes the newest event, so ids
 * only grow and the spans stay true (src/store/retention.ts).
 *
 * Existing rows are carried over in the order they were received; each transaction's span and
 * `seq_no_above` (its highest seqNo: their order before is unknown) are set from them.
 */
export const migrationOcpp201EventsInArrivalOrder = `
ALTER TABLE ocpp201_transaction_events RENAME TO ocpp201_transaction_events_before_arrival;
DROP TRIGGER ocpp201_transaction_events_kept_while_open;

CREATE TABLE ocpp201_transaction_events (
  event_id INTEGER PRIMARY KEY,
  tx_key INTEGER NOT NULL REFERENCES ocpp201_transactions (tx_key),
  seq_no INTEGER NOT NULL,
  -- 0 Started, 1 Updated, 2 Ended
  type_code INTEGER NOT NULL CHECK (type_code BETWEEN 0 AND 2),
  trigger_code INTEGER CHECK (trigger_code BETWEEN 0 AND 28),
  trigger_text TEXT,
  offline INTEGER NOT NULL CHECK (offline IN (0, 1)),
  timestamp_ms INTEGER,
  timestamp_text TEXT,
  received_at_ms INTEGER NOT NULL,
  CHECK ((trigger_code IS NULL) <> (trigger_text IS NULL)),
  CHECK (timestamp_ms IS NOT NULL OR timestamp_text IS NOT NULL)
) STRICT;

INSERT INTO ocpp201_transaction_events (tx_key, seq_no, type_code, trigger_code, trigger_text,
    offline, timestamp_ms, timestamp_text, received_at_ms)
  SELECT tx_key, seq_no, type_code, trigger_code, trigger_text, offline, timestamp_ms,
    timestamp_text, received_at_ms
  FROM ocpp201_transaction_events_before_arrival ORDER BY received_at_ms, tx_key, seq_no;

DROP TABLE ocpp201_transaction_events_before_arrival;

ALTER TABLE ocpp201_transactions ADD COLUMN first_event_id INTEGER NOT NULL DEFAULT 1;
ALTER TABLE ocpp201_transactions ADD COLUMN last_event_id INTEGER;
ALTER TABLE ocpp201_transactions ADD COLUMN seq_no_above INTEGER;

WITH spans(tx_key, first_id, last_id, top_seq_no) AS (
    SELECT tx_key, min(event_id), max(event_id), max(seq_no) FROM ocpp201_transaction_events
    GROUP BY tx_key),
  top(id) AS (SELECT coalesce(max(event_id), 0) FROM ocpp201_transaction_events)
UPDATE ocpp201_transactions AS t
  SET first_event_id = coalesce(
      (SELECT s.first_id FROM spans s WHERE s.tx_key = t.tx_key), (SELECT id FROM top) + 1),
    last_event_id = CASE WHEN t.ended_at IS NOT NULL THEN coalesce(
      (SELECT s.last_id FROM spans s WHERE s.tx_key = t.tx_key), (SELECT id FROM top)) END,
    seq_no_above = (SELECT s.top_seq_no FROM spans s WHERE s.tx_key = t.tx_key);

CREATE TRIGGER ocpp201_transaction_events_kept_while_open
BEFORE DELETE ON ocpp201_transaction_events
WHEN EXISTS (SELECT 1 FROM ocpp201_transactions t JOIN sessions s
    ON s.charger_id = t.charger_id AND s.transaction_ref = t.transaction_id
  WHERE t.tx_key = OLD.tx_key AND s.state IN ('authorizing', 'authorized', 'charging', 'stopping'))
BEGIN SELECT RAISE(ABORT, 'the events of an open session''s transaction are kept'); END;
`;
