import { parseMeasurandList, SUPPORTED_MEASURANDS } from '../shared/meter-reading.js';
import type { SimMeasurand } from '../shared/meter-reading.js';
import type { ConfigurationKeyValue } from './ocpp-types.js';

export type ChangeConfigurationStatus = 'Accepted' | 'Rejected' | 'RebootRequired' | 'NotSupported';

interface KeyDefinition {
  readonly: boolean;
  value: string;
  isValid: (value: string) => boolean;
  /** Taken, but only in effect after the next reboot (answered RebootRequired). */
  rebootRequired?: boolean;
  /** The value in effect while a change awaits the reboot (what is read back is the new one). */
  inEffect?: string;
}

const always = (): boolean => true;
const isNonNegativeInteger = (value: string): boolean => /^\d{1,9}$/.test(value.trim());
const isPositiveInteger = (value: string): boolean =>
  isNonNegativeInteger(value) && Number(value) > 0;
const isBoolean = (value: string): boolean => /^(true|false)$/i.test(value.trim());
const isMeasurandList = (value: string): boolean => parseMeasurandList(value) !== undefined;

function readonlyKey(value: string): KeyDefinition {
  return { readonly: true, value, isValid: always };
}

function writableKey(value: string, isValid: (value: string) => boolean): KeyDefinition {
  return { readonly: false, value, isValid };
}

/** The local list's capacity, and the entries one SendLocalList may carry. */
export const LOCAL_LIST_MAX_LENGTH = 100;
export const SEND_LOCAL_LIST_MAX_LENGTH = 20;

export const DEFAULT_SAMPLED_DATA = 'Energy.Active.Import.Register,Power.Active.Import,SoC';

/** The OCPP 1.6 standard configuration keys (chapter 9) this simulator implements. */
function standardKeys(
  connectors: number,
  quirks: ConfigurationQuirks,
): Record<string, KeyDefinition> {
  const register = 'Energy.Active.Import.Register';
  // Firmware whose meter driver only reads the register refuses any other measurand.
  const sampled = quirks.registerOnly
    ? writableKey(register, (value) => value.trim() === register)
    : writableKey(DEFAULT_SAMPLED_DATA, isMeasurandList);
  return {
    AuthorizationCacheEnabled: writableKey('true', isBoolean),
    AuthorizeRemoteTxRequests: writableKey('false', isBoolean),
    ClockAlignedDataInterval: writableKey('0', isNonNegativeInteger),
    ConnectionTimeOut: writableKey('60', isPositiveInteger),
    GetConfigurationMaxKeys: readonlyKey('50'),
    // Replaced by the interval in the BootNotification confirmation.
    HeartbeatInterval: writableKey('300', isNonNegativeInteger),
    LocalAuthListEnabled: writableKey('true', isBoolean),
    LocalAuthListMaxLength: readonlyKey(String(LOCAL_LIST_MAX_LENGTH)),
    LocalAuthorizeOffline: writableKey('false', isBoolean),
    LocalPreAuthorize: writableKey('false', isBoolean),
    MeterValuesAlignedData: writableKey('Energy.Active.Import.Register', isMeasurandList),
    MeterValuesSampledData: sampled,
    MeterValuesSampledDataMaxLength: readonlyKey(String(SUPPORTED_MEASURANDS.length)),
    MeterValueSampleInterval: {
      ...writableKey('60', isNonNegativeInteger),
      rebootRequired: quirks.intervalAfterReboot === true,
    },
    NumberOfConnectors: readonlyKey(String(connectors)),
    ResetRetries: writableKey('1', isNonNegativeInteger),
    SendLocalListMaxLength: readonlyKey(String(SEND_LOCAL_LIST_MAX_LENGTH)),
    StopTransactionOnEVSideDisconnect: readonlyKey('true'),
    StopTransactionOnInvalidId: writableKey('true', isBoolean),
    StopTxnAlignedData: writableKey('', isMeasurandList),
    StopTxnSampledData: quirks.registerOnly
      ? { ...sampled }
      : writableKey(DEFAULT_SAMPLED_DATA, isMeasurandList),
    SupportedFeatureProfiles: readonlyKey(
      quirks.smartCharging
        ? 'Core,LocalAuthListManagement,RemoteTrigger,SmartCharging'
        : 'Core,LocalAuthListManagement,RemoteTrigger',
    ),
    UnlockConnectorOnEVSideDisconnect: readonlyKey('true'),
    ...(quirks.smartCharging
      ? {
          ChargeProfileMaxStackLevel: readonlyKey('8'),
          ChargingScheduleAllowedChargingRateUnit: readonlyKey('Current,Power'),
          ChargingScheduleMaxPeriods: readonlyKey('24'),
          MaxChargingProfilesInstalled: readonlyKey('32'),
        }
      : {}),
    ...(quirks.costScreen ? { CustomDisplayCostAndPrice: readonlyKey('true') } : {}),
    // The WebSocket layer reads it when it opens the connection, as many chargers do.
    WebSocketPingInterval: { ...writableKey('0', isNonNegativeInteger), rebootRequired: true },
  };
}

/** Where a firmware personality changes the configuration keys. */
export interface ConfigurationQuirks {
  registerOnly?: boolean;
  smartCharging?: boolean;
  /** MeterValueSampleInterval takes effect only after a reboot. */
  intervalAfterReboot?: boolean;
  /** The OCA cost-and-price messages (CustomDisplayCostAndPrice). */
  costScreen?: boolean;
}

export class ConfigurationStore {
  private readonly keys: Record<string, KeyDefinition>;

  constructor(connectors: number, quirks: ConfigurationQuirks = {}) {
    this.keys = standardKeys(connectors, quirks);
  }

  // Central systems differ in how they capitalise keys (ConnectionTimeOut vs ConnectionTimeout).
  private canonical(key: string): string | undefined {
    const lower = key.toLowerCase();
    return Object.keys(this.keys).find((name) => name.toLowerCase() === lower);
  }

  /** The value the charger works with (a change awaiting a reboot is not yet it). */
  get(key: string): string | undefined {
    const name = this.canonical(key);
    const definition = name === undefined ? undefined : this.keys[name];
    return definition?.inEffect ?? definition?.value;
  }

  /** A reboot: changes that awaited it take effect. */
  rebooted(): void {
    for (const definition of Object.values(this.keys)) delete definition.inEffect;
  }

  getInteger(key: string): number {
    return Number(this.get(key) ?? 0);
  }

  getBoolean(key: string): boolean {
    return this.get(key)?.toLowerCase() === 'true';
  }

  getMeasurands(key: string): SimMeasurand[] {
    return parseMeasurandList(this.get(key) ?? '') ?? [];
  }

  /** Applies a change as the central system requests it; returns the ChangeConfiguration status. */
  change(key: string, value: string): ChangeConfigurationStatus {
    const name = this.canonical(key);
    const definition = name === undefined ? undefined : this.keys[name];
    if (definition === undefined) return 'NotSupported';
    if (definition.readonly || !definition.isValid(value)) return 'Rejected';
    if (definition.rebootRequired) definition.inEffect ??= definition.value;
    definition.value = value.trim();
    return definition.rebootRequired ? 'RebootRequired' : 'Accepted';
  }

  /** Internal updates (e.g. the boot interval) that bypass read-only checks. */
  set(key: string, value: string): void {
    const name = this.canonical(key);
    const definition = name === undefined ? undefined : this.keys[name];
    if (definition === undefined) throw new Error(`unknown configuration key ${key}`);
    definition.value = value;
  }

  canonicalName(key: string): string | undefined {
    return this.canonical(key);
  }

  describe(requested: readonly string[] | undefined): {
    configurationKey: ConfigurationKeyValue[];
    unknownKey: string[];
  } {
    const names = requested && requested.length > 0 ? requested : Object.keys(this.keys);
    const configurationKey: ConfigurationKeyValue[] = [];
    const unknownKey: string[] = [];
    for (const requestedName of names) {
      const name = this.canonical(requestedName);
      const definition = name === undefined ? undefined : this.keys[name];
      if (name === undefined || definition === undefined) unknownKey.push(requestedName);
      else
        configurationKey.push({
          key: name,
          readonly: definition.readonly,
          value: definition.value,
        });
    }
    return { configurationKey, unknownKey };
  }
}
