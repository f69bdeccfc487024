/**
 * Schema for alerts (src/alerts; appended after the schemas before it; never edited once released).
 * - alerts: one row per condition raised, cleared at most once; at most one open row per kind and
 *   subject. Rows are never deleted: the history is what an operator reads after a bad night.
 * - alert_deliveries: the webhook's durable queue, one row per event (raised, cleared) with the
 *   exact body sent, retried until a receiver answers 2xx or the row is given up.
 * - a partial index finds the stops that went past the remote stop without reading every attempt.
 */
export const migrationAlerts = `
CREATE TABLE IF NOT EXISTS alerts (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  subject TEXT NOT NULL,
  raised_at TEXT NOT NULL,
  cleared_at TEXT CHECK (cleared_at IS NULL OR cleared_at >= raised_at),
  detail TEXT NOT NULL,
  acknowledged_at TEXT,
  acknowledged_by TEXT
) STRICT;
CREATE UNIQUE INDEX IF NOT EXISTS alerts_one_open ON alerts(kind, subject) WHERE cleared_at IS NULL;
CREATE INDEX IF NOT EXISTS alerts_kind_subject ON alerts(kind, subject);
CREATE INDEX IF NOT EXISTS alerts_raised ON alerts(raised_at);
CREATE TRIGGER IF NOT EXISTS alerts_kept BEFORE DELETE ON alerts
BEGIN SELECT RAISE(ABORT, 'alerts are history: never deleted'); END;
CREATE TRIGGER IF NOT EXISTS alerts_cleared_once BEFORE UPDATE OF cleared_at ON alerts
WHEN OLD.cleared_at IS NOT NULL
BEGIN SELECT RAISE(ABORT, 'an alert is cleared once'); END;

CREATE TABLE IF NOT EXISTS alert_deliveries (
  event_id TEXT PRIMARY KEY,
  body TEXT NOT NULL,
  created_at TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,
  delivered_at TEXT,
  given_up_at TEXT,
  last_error TEXT
) STRICT;
CREATE INDEX IF NOT EXISTS alert_deliveries_due ON alert_deliveries(next_attempt_at)
  WHERE delivered_at IS NULL AND given_up_at IS NULL;

CREATE INDEX IF NOT EXISTS stop_attempts_escalated ON stop_attempts(session_id)
  WHERE step <> 'remote_stop';
`;
