/**
 * What each charger's local authorization list holds as far as the gateway knows: its version
 * and its entries, written in the transaction that records the charger's Accepted. `full_wanted`
 * says the charger's list is not known to be this (after a reboot, a version mismatch, a failed
 * update): the next update is a full one. A charger with no row has never been sent a list.
 */
export const migrationLocalLists = `
CREATE TABLE local_lists (
  charger_id TEXT PRIMARY KEY CHECK (length(charger_id) BETWEEN 1 AND 64),
  version INTEGER NOT NULL CHECK (version >= 0),
  full_wanted INTEGER NOT NULL CHECK (full_wanted IN (0, 1)),
  updated_at TEXT NOT NULL
) STRICT;
CREATE TABLE local_list_entries (
  charger_id TEXT NOT NULL REFERENCES local_lists(charger_id),
  token_key TEXT NOT NULL,
  token_value TEXT NOT NULL,
  token_type TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('accepted', 'blocked')),
  expires_at TEXT,
  PRIMARY KEY (charger_id, token_key)
) STRICT;
`;
