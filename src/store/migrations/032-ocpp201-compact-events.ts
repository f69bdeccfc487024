/**
 * 2.0.1 events in a compact row: the two times as integer ms, the type and trigger reason as
 * small codes (src/ocpp/v201/event-row.ts holds the code tables and reads them back as text).
 * An event row was about 85 bytes, so a 1 KiB leaf held about 11 and a transaction's leaf, in
 * the middle of the b-tree, split every five or six samples; now it is about 30.
 *
 * What does not fit the codes is kept as it came, never lost: a trigger reason outside the table
 * in `trigger_text`, and a timestamp whose ms do not spell it back exactly (another spelling, or
 * no instant at all) in `timestamp_text`, beside its ms when it has some. `received_at` was always
 * the gateway's own `toISOString`; a value that did not convert would fail NOT NULL, and the
 * migration's transaction would leave the file as it was.
 *
 * Existing rows are carried over; the trigger that keeps an open session's events is remade.
 */
export const migrationOcpp201CompactEvents = `
ALTER TABLE ocpp201_transaction_events RENAME TO ocpp201_transaction_events_before_compact;

CREATE TABLE ocpp201_transaction_events (
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
  PRIMARY KEY (tx_key, seq_no),
  CHECK ((trigger_code IS NULL) <> (trigger_text IS NULL)),
  CHECK (timestamp_ms IS NOT NULL OR timestamp_text IS NOT NULL)
) STRICT, WITHOUT ROWID;

WITH types(code, name) AS (VALUES (0, 'Started'), (1, 'Updated'), (2, 'Ended')),
  reasons(code, name) AS (VALUES
    (0, 'Authorized'), (1, 'CablePluggedIn'), (2, 'ChargingRateChanged'),
    (3, 'ChargingStateChanged'), (4, 'Deauthorized'), (5, 'EnergyLimitReached'),
    (6, 'EVCommunicationLost'), (7, 'EVConnectTimeout'), (8, 'MeterValueClock'),
    (9, 'MeterValuePeriodic'), (10, 'TimeLimitReached'), (11, 'Trigger'), (12, 'UnlockCommand'),
    (13, 'StopAuthorized'), (14, 'EVDeparted'), (15, 'EVDetected'), (16, 'RemoteStop'),
    (17, 'RemoteStart'), (18, 'AbnormalCondition'), (19, 'SignedDataReceived'),
    (20, 'ResetCommand'), (21, 'CostLimitReached'), (22, 'LimitSet'), (23, 'OperationModeChanged'),
    (24, 'RunningCost'), (25, 'SoCLimitReached'), (26, 'TariffChanged'), (27, 'TariffNotAccepted'),
    (28, 'TxResumed')),
  old_rows(tx_key, seq_no, event_type, trigger_reason, offline, timestamp, timestamp_ms,
      received_at_ms) AS (
    SELECT tx_key, seq_no, event_type, trigger_reason, offline, timestamp,
      CAST(round(unixepoch(timestamp, 'subsec') * 1000) AS INTEGER),
      CAST(round(unixepoch(received_at, 'subsec') * 1000) AS INTEGER)
    FROM ocpp201_transaction_events_before_compact)
INSERT INTO ocpp201_transaction_events (tx_key, seq_no, type_code, trigger_code, trigger_text,
    offline, timestamp_ms, timestamp_text, received_at_ms)
  SELECT b.tx_key, b.seq_no, y.code, r.code, CASE WHEN r.code IS NULL THEN b.trigger_reason END,
    b.offline, b.timestamp_ms,
    CASE WHEN strftime('%Y-%m-%dT%H:%M:%fZ', b.timestamp_ms / 1000.0, 'unixepoch') IS b.timestamp
      THEN NULL ELSE b.timestamp END,
    b.received_at_ms
  FROM old_rows b JOIN types y ON y.name = b.event_type LEFT JOIN reasons r ON r.name = b.trigger_reason
  ORDER BY b.tx_key, b.seq_no;

DROP TABLE ocpp201_transaction_events_before_compact;

CREATE TRIGGER ocpp201_transaction_events_kept_while_open
BEFORE DELETE ON ocpp201_transaction_events
WHEN EXISTS (SELECT 1 FROM ocpp201_transactions t JOIN sessions s
    ON s.charger_id = t.charger_id AND s.transaction_ref = t.transaction_id
  WHERE t.tx_key = OLD.tx_key AND s.state IN ('authorizing', 'authorized', 'charging', 'stopping'))
BEGIN SELECT RAISE(ABORT, 'the events of an open session''s transaction are kept'); END;
`;
