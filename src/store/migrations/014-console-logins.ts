/**
 * Schema for the browser console's logins (appended after the schemas before it; never edited once
 * released).
 * - console_sessions: one row per logged-in browser. Only the SHA-256 of the cookie value is kept
 *   (a 256-bit random secret, like an operator credential), so a copy of the database logs nobody
 *   in. The CSRF token is not a credential on its own (it only works with the cookie) and is kept
 *   as it is, to be handed back to the page on GET /console/session. A row dies with its expiry or
 *   its operator's revocation (checked on every request) or at logout (deleted).
 */
export const migrationConsoleLogins = `
CREATE TABLE IF NOT EXISTS console_sessions (
  cookie_hash TEXT PRIMARY KEY CHECK (length(cookie_hash) = 64),
  operator_id TEXT NOT NULL REFERENCES operators(id),
  csrf_token TEXT NOT NULL CHECK (length(csrf_token) BETWEEN 32 AND 128),
  created_at TEXT NOT NULL,
  expires_at_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS console_sessions_expiry ON console_sessions(expires_at_ms);
`;
