/**
 * Schema for chargers managed at runtime (appended after the schemas before it; never edited once
 * released): where each site_chargers row came from. 'config': an entry of the config file, with
 * the fingerprint of that entry at the last start (config/charger-registry.ts applies an entry
 * only when it changed); 'api': added through the operator API.
 */
export const migrationOperatorChargers = `
ALTER TABLE site_chargers ADD COLUMN source TEXT NOT NULL DEFAULT 'config'
  CHECK (source IN ('config', 'api'));
ALTER TABLE site_chargers ADD COLUMN config_fingerprint TEXT;
`;
