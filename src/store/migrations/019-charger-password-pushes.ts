/**
 * Charger passwords the gateway set on the charger itself (1.6 AuthorizationKey, 2.0.1
 * SecurityCtrlr.BasicAuthPassword): the stored form of the pushed password (as in
 * charger_passwords or charger_keys, never the password), the charger's answer, and when the
 * charger first connected with it, which ends its older credentials (docs/security.md).
 */
export const migrationChargerPasswordPushes = `
CREATE TABLE charger_password_pushes (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  charger_id TEXT NOT NULL REFERENCES site_chargers(id),
  password_hash TEXT NOT NULL,
  requested_at TEXT NOT NULL,
  answer TEXT CHECK (answer IN ('taken', 'refused', 'unanswered')),
  answered_at TEXT,
  confirmed_at TEXT
) STRICT;
CREATE INDEX charger_password_pushes_charger ON charger_password_pushes(charger_id, password_hash);
`;
