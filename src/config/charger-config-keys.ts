/**
 * Charger settings the gateway applies itself on every boot (ocpp/v16 and ocpp/v201 configure()):
 * the paid-energy stop depends on them, so no operator may change them through the API.
 */
export const GATEWAY_MANAGED_CONFIG = [
  'MeterValueSampleInterval',
  'MeterValuesSampledData',
  'ConnectionTimeOut',
  'SampledDataCtrlr.TxUpdatedInterval',
  'SampledDataCtrlr.TxUpdatedMeasurands',
  'SampledDataCtrlr.TxStartedMeasurands',
  'SampledDataCtrlr.TxEndedMeasurands',
  'TxCtrlr.EVConnectionTimeOut',
  // Local authorization (charging/local-lists): a cache or an offline start can spend money.
  'LocalAuthListEnabled',
  'LocalAuthorizeOffline',
  'AuthorizationCacheEnabled',
  'AllowOfflineTxForUnknownId',
  'LocalAuthListCtrlr.Enabled',
  'AuthCacheCtrlr.Enabled',
  'AuthCtrlr.LocalAuthorizeOffline',
  'AuthCtrlr.OfflineTxForUnknownIdEnabled',
] as const;

const MANAGED = new Set(GATEWAY_MANAGED_CONFIG.map((k) => k.toLowerCase()));

export function isGatewayManaged(key: string): boolean {
  return MANAGED.has(key.toLowerCase());
}

/** What an operator may change unless the config says otherwise: intervals that cost no money. */
export const DEFAULT_WRITABLE_CONFIG = [
  'HeartbeatInterval',
  'WebSocketPingInterval',
  'ClockAlignedDataInterval',
  'MeterValuesAlignedData',
  'OCPPCommCtrlr.HeartbeatInterval',
  'OCPPCommCtrlr.WebSocketPingInterval',
  'AlignedDataCtrlr.Interval',
  'AlignedDataCtrlr.Measurands',
] as const;
