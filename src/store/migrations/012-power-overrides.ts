/**
 * The operator's run-time power limits (one per node: the site or a circuit). Kept so a restart
 * does not raise a limit the operator lowered; an expired row is ignored and removed.
 */
export const migrationPowerOverrides = `
CREATE TABLE site_power_overrides (
  node_id TEXT PRIMARY KEY,
  watts INTEGER NOT NULL CHECK (watts >= 0),
  reason TEXT NOT NULL,
  expires_at_ms INTEGER,
  set_by TEXT NOT NULL,
  set_at_ms INTEGER NOT NULL,
  CHECK (expires_at_ms IS NULL OR expires_at_ms > set_at_ms)
) STRICT;
`;
