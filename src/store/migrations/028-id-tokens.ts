/**
 * Tokens bound to drivers: RFID cards and vehicles (AutoCharge identifiers) that start a session
 * paid from the driver's wallet (docs/driver-tokens.md). A token's key is its recognised form
 * (src/id-tokens/token-key.ts); one key is bound to at most one driver at a time, which the schema
 * holds, so a charger's token is never guessed between two wallets. Unbinding keeps the row (the
 * sessions it paid still name it); nothing is deleted.
 *
 * A session says how it started (`origin`) and, when by a bound token, which one; a bound token
 * has at most one open session at a time (a card tapped at two connectors starts one).
 */
export const migrationIdTokens = `
CREATE TABLE id_tokens (
  id TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 64),
  driver_id TEXT NOT NULL REFERENCES drivers(id),
  kind TEXT NOT NULL CHECK (kind IN ('card', 'vehicle')),
  token_type TEXT NOT NULL CHECK (token_type IN
    ('ISO14443', 'ISO15693', 'KeyCode', 'Local', 'Central', 'MacAddress', 'eMAID')),
  token_value TEXT NOT NULL CHECK (length(token_value) BETWEEN 1 AND 36),
  token_key TEXT NOT NULL CHECK (length(token_key) BETWEEN 1 AND 36 AND token_key = upper(token_key)),
  label TEXT NOT NULL DEFAULT '' CHECK (length(label) <= 100),
  expires_at TEXT,
  blocked_at TEXT,
  blocked_reason TEXT,
  source TEXT NOT NULL CHECK (source IN ('operator', 'cloud')),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  unbound_at TEXT,
  CHECK ((blocked_at IS NULL) = (blocked_reason IS NULL))
) STRICT;
CREATE UNIQUE INDEX id_tokens_bound_once ON id_tokens(token_key) WHERE unbound_at IS NULL;
CREATE INDEX id_tokens_driver ON id_tokens(driver_id);
CREATE TRIGGER id_tokens_no_delete BEFORE DELETE ON id_tokens
BEGIN SELECT RAISE(ABORT, 'id tokens are never deleted: unbind them'); END;
CREATE TRIGGER id_tokens_unbound_is_final BEFORE UPDATE ON id_tokens
WHEN OLD.unbound_at IS NOT NULL
BEGIN SELECT RAISE(ABORT, 'an unbound id token never changes: bind it again'); END;
CREATE TRIGGER id_tokens_key_is_fixed BEFORE UPDATE OF token_key, driver_id ON id_tokens
WHEN NEW.token_key <> OLD.token_key OR NEW.driver_id <> OLD.driver_id
BEGIN SELECT RAISE(ABORT, 'an id token keeps its key and driver: unbind it and bind it again'); END;

ALTER TABLE sessions ADD COLUMN origin TEXT NOT NULL DEFAULT 'app'
  CHECK (origin IN ('app', 'card', 'vehicle'));
ALTER TABLE sessions ADD COLUMN id_token_id TEXT REFERENCES id_tokens(id);
CREATE UNIQUE INDEX sessions_one_open_per_id_token ON sessions(id_token_id)
  WHERE id_token_id IS NOT NULL AND state IN ('authorizing', 'authorized', 'charging', 'stopping');
CREATE TRIGGER sessions_origin_names_its_token BEFORE INSERT ON sessions
WHEN (NEW.origin = 'app') <> (NEW.id_token_id IS NULL)
BEGIN SELECT RAISE(ABORT, 'a card or vehicle session names its id token; an app session none'); END;
`;
