/**
 * Alerts and their webhook deliveries may now be pruned (src/store/retention.ts), within limits
 * the schema holds whatever the code does:
 * - an open alert is never deleted (the watch relies on it not to raise it again), nor a
 *   `stop_escalated` or `operator_loss` alert: they are facts about one session, raised once
 *   ever, and the watch knows they were raised by their row; sessions are never deleted either.
 * - a webhook event neither delivered nor given up is never deleted: it is the queue.
 * - alert_deliveries.alert_id names the alert an event is about (NULL for a test event), so an
 *   alert's delivery state is read without parsing every body.
 */
export const migrationAlertRetention = `
DROP TRIGGER IF EXISTS alerts_kept;
CREATE TRIGGER IF NOT EXISTS alerts_kept_open BEFORE DELETE ON alerts
WHEN OLD.cleared_at IS NULL OR OLD.kind IN ('stop_escalated', 'operator_loss')
BEGIN SELECT RAISE(ABORT, 'an open alert, or one about a session, is never deleted'); END;

ALTER TABLE alert_deliveries ADD COLUMN alert_id TEXT;
UPDATE alert_deliveries SET alert_id = json_extract(body, '$.alert.id');
CREATE INDEX IF NOT EXISTS alert_deliveries_alert ON alert_deliveries(alert_id);
CREATE INDEX IF NOT EXISTS alert_deliveries_done ON alert_deliveries(coalesce(delivered_at, given_up_at))
  WHERE delivered_at IS NOT NULL OR given_up_at IS NOT NULL;
CREATE TRIGGER IF NOT EXISTS alert_deliveries_queued_kept BEFORE DELETE ON alert_deliveries
WHEN OLD.delivered_at IS NULL AND OLD.given_up_at IS NULL
BEGIN SELECT RAISE(ABORT, 'an undelivered webhook event is never deleted'); END;
`;
