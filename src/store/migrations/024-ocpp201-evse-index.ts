/**
 * An index for a 2.0.1 EVSE's newest transaction (appended after the schemas before it; never
 * edited once released). Every 2.0.1 StatusNotification and MeterValues asks for it; without the
 * index SQLite read every transaction the charger ever had and sorted them, a cost that grew with
 * the site's age.
 */
export const migrationOcpp201EvseIndex = `
CREATE INDEX IF NOT EXISTS ocpp201_transactions_by_evse ON ocpp201_transactions (charger_id, evse_id);
`;
