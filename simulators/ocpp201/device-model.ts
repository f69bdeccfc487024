import { parseMeasurandList, SUPPORTED_MEASURANDS } from '../shared/meter-reading.js';
import type { SimMeasurand } from '../shared/meter-reading.js';
import type {
  Attribute,
  Component,
  DataType,
  GetVariableResult,
  ReportData,
  SetVariableResult,
  Variable,
} from './ocpp-types.js';

/** When a transaction starts (TxCtrlr.TxStartPoint); one of these at a time. */
export const TX_START_POINTS = ['PowerPathClosed', 'EVConnected', 'Authorized'] as const;
export type TxStartPoint = (typeof TX_START_POINTS)[number];
// TxStopPoint: the transaction ends when one of the listed conditions stops being true.
const TX_STOP_POINTS = ['PowerPathClosed', 'EVConnected', 'Authorized'] as const;

interface VariableDefinition {
  component: string;
  variable: string;
  /** The variable's instance (TariffCostCtrlr.Enabled[Cost]); most have none. */
  instance?: string;
  value: string;
  mutability: 'ReadOnly' | 'ReadWrite';
  dataType: DataType;
  unit?: string;
  valuesList?: string;
  isValid: (value: string) => boolean;
  /** Taken, but only in effect after the next reboot (answered RebootRequired). */
  rebootRequired?: boolean;
  /** The value in effect while a change awaits the reboot (what is read back is the new one). */
  inEffect?: string;
}

const isNonNegativeInteger = (value: string): boolean => /^\d{1,9}$/.test(value.trim());
const isPositiveInteger = (value: string): boolean =>
  isNonNegativeInteger(value) && Number(value) > 0;
const isBoolean = (value: string): boolean => /^(true|false)$/i.test(value.trim());
const isMeasurandList = (value: string): boolean => parseMeasurandList(value) !== undefined;
const isStartPoint = (value: string): boolean =>
  (TX_START_POINTS as readonly string[]).includes(value.trim());
const isStopPointList = (value: string): boolean => {
  const members = value.split(',').map((member) => member.trim());
  return members.every((member) => (TX_STOP_POINTS as readonly string[]).includes(member));
};

const MEASURAND_LIST = SUPPORTED_MEASURANDS.join(',');

function integer(
  component: string,
  variable: string,
  value: string,
  positive = false,
): VariableDefinition {
  return {
    component,
    variable,
    value,
    mutability: 'ReadWrite',
    dataType: 'integer',
    unit: 's',
    isValid: positive ? isPositiveInteger : isNonNegativeInteger,
  };
}

function measurands(component: string, variable: string, value: string): VariableDefinition {
  return {
    component,
    variable,
    value,
    mutability: 'ReadWrite',
    dataType: 'MemberList',
    valuesList: MEASURAND_LIST,
    isValid: isMeasurandList,
  };
}

function flag(component: string, variable: string, value: string): VariableDefinition {
  return {
    component,
    variable,
    value,
    mutability: 'ReadWrite',
    dataType: 'boolean',
    isValid: isBoolean,
  };
}

/** The local list's capacity, and the entries and bytes one SendLocalList may carry. */
export const LOCAL_LIST_ITEMS_PER_MESSAGE = 20;
export const LOCAL_LIST_BYTES_PER_MESSAGE = 8000;
export const LOCAL_LIST_MAX_ENTRIES = 100;

/** Local authorization (C10–C14, D01–D03): the list, the cache, offline starts. */
function localAuthorizationVariables(): VariableDefinition[] {
  const count = (variable: string, value: number): VariableDefinition => ({
    component: 'LocalAuthListCtrlr',
    variable,
    value: String(value),
    mutability: 'ReadOnly',
    dataType: 'integer',
    isValid: isPositiveInteger,
  });
  return [
    flag('AuthCtrlr', 'LocalAuthorizeOffline', 'false'),
    flag('AuthCacheCtrlr', 'Enabled', 'true'),
    flag('LocalAuthListCtrlr', 'Enabled', 'true'),
    count('ItemsPerMessage', LOCAL_LIST_ITEMS_PER_MESSAGE),
    count('BytesPerMessage', LOCAL_LIST_BYTES_PER_MESSAGE),
  ];
}

/** The standard device-model variables this station implements, with their defaults. */
function standardVariables(): VariableDefinition[] {
  return [
    // Replaced by the interval in the BootNotification response.
    integer('OCPPCommCtrlr', 'HeartbeatInterval', '300'),
    // The WebSocket layer reads it when it opens the connection, as many stations do.
    { ...integer('OCPPCommCtrlr', 'WebSocketPingInterval', '0'), rebootRequired: true },
    integer('SampledDataCtrlr', 'TxUpdatedInterval', '60'),
    measurands('SampledDataCtrlr', 'TxStartedMeasurands', 'Energy.Active.Import.Register,SoC'),
    measurands('SampledDataCtrlr', 'TxUpdatedMeasurands', 'Energy.Active.Import.Register'),
    measurands('SampledDataCtrlr', 'TxEndedMeasurands', 'Energy.Active.Import.Register,SoC'),
    integer('AlignedDataCtrlr', 'Interval', '0'),
    measurands('AlignedDataCtrlr', 'Measurands', 'Energy.Active.Import.Register'),
    integer('TxCtrlr', 'EVConnectionTimeOut', '60', true),
    {
      component: 'TxCtrlr',
      variable: 'TxStartPoint',
      value: 'PowerPathClosed',
      mutability: 'ReadWrite',
      dataType: 'OptionList',
      valuesList: TX_START_POINTS.join(','),
      isValid: isStartPoint,
    },
    {
      component: 'TxCtrlr',
      variable: 'TxStopPoint',
      value: 'PowerPathClosed',
      mutability: 'ReadWrite',
      dataType: 'MemberList',
      valuesList: TX_STOP_POINTS.join(','),
      isValid: isStopPointList,
    },
    {
      component: 'AuthCtrlr',
      variable: 'AuthorizeRemoteStart',
      value: 'false',
      mutability: 'ReadWrite',
      dataType: 'boolean',
      isValid: isBoolean,
    },
    ...localAuthorizationVariables(),
  ];
}

const costFlag = (component: string, variable: string, instance?: string): VariableDefinition => ({
  component,
  variable,
  ...(instance ? { instance } : {}),
  value: 'true',
  mutability: 'ReadWrite',
  dataType: 'boolean',
  isValid: isBoolean,
});

const currencyVariable = (): VariableDefinition => ({
  component: 'TariffCostCtrlr',
  variable: 'Currency',
  value: 'NGN',
  mutability: 'ReadWrite',
  dataType: 'string',
  isValid: (value) => /^[A-Z]{3}$/.test(value.trim()),
});

/** A driver display (cost-screen): tariff and cost shown in NGN, display messages taken. */
function costScreenVariables(): VariableDefinition[] {
  return [
    costFlag('TariffCostCtrlr', 'Enabled', 'Tariff'),
    costFlag('TariffCostCtrlr', 'Enabled', 'Cost'),
    currencyVariable(),
    costFlag('DisplayMessageCtrlr', 'Enabled'),
  ];
}

export type SetOutcome = SetVariableResult['attributeStatus'];

/**
 * The station's device model: named variables per component, answered through GetVariables,
 * SetVariables and GetBaseReport. Names are matched exactly, as the 2.0.1 spec requires; only the
 * Actual attribute exists and no variable has instances or per-EVSE values.
 */
export class DeviceModel {
  private readonly variables = standardVariables();

  /** registerOnly: firmware whose meter driver reads only the register and refuses the rest. */
  /** smartCharging: the station takes charging profiles, in amperes or watts. */
  /** intervalAfterReboot: TxUpdatedInterval takes effect only after a reboot. */
  /** costScreen: a driver display that shows tariffs, costs and display messages. */
  constructor(
    quirks: {
      registerOnly?: boolean;
      smartCharging?: boolean;
      intervalAfterReboot?: boolean;
      costScreen?: boolean;
    } = {},
  ) {
    if (quirks.costScreen) this.variables.push(...costScreenVariables());
    if (quirks.intervalAfterReboot) {
      const interval = this.find('SampledDataCtrlr', 'TxUpdatedInterval');
      if (interval) interval.rebootRequired = true;
    }
    if (quirks.registerOnly) {
      const register = 'Energy.Active.Import.Register';
      for (const definition of this.variables) {
        if (definition.dataType !== 'MemberList' || definition.valuesList === undefined) continue;
        definition.value = register;
        definition.valuesList = register;
        definition.isValid = (value) => value.trim() === register;
      }
    }
    if (quirks.smartCharging) {
      this.variables.push({
        component: 'SmartChargingCtrlr',
        variable: 'RateUnit',
        value: 'A,W',
        mutability: 'ReadOnly',
        dataType: 'MemberList',
        valuesList: 'A,W',
        isValid: () => false,
      });
    }
  }

  private find(
    component: string,
    variable: string,
    instance?: string,
  ): VariableDefinition | undefined {
    return this.variables.find(
      (v) => v.component === component && v.variable === variable && v.instance === instance,
    );
  }

  private knowsComponent(component: Component): boolean {
    return this.variables.some((v) => v.component === component.name);
  }

  /** The value the station works with (a change awaiting a reboot is not yet it). */
  get(component: string, variable: string, instance?: string): string {
    const definition = this.find(component, variable, instance);
    if (!definition) throw new Error(`unknown variable ${component}.${variable}`);
    return definition.inEffect ?? definition.value;
  }

  /** Whether a variable exists (2.1 adds some that a 2.0.1 station has not). */
  has(component: string, variable: string, instance?: string): boolean {
    return this.find(component, variable, instance) !== undefined;
  }

  /**
   * 2.1 local cost calculation (TariffCostCtrlr, I-section): `Available` (read-only) says the
   * station can compute cost from a tariff, `Enabled` switches it; both per instance `Tariff`
   * and `Cost`. A station that cannot refuses `Enabled = true`.
   */
  addLocalCost(available: boolean): void {
    const value = String(available);
    for (const instance of ['Tariff', 'Cost']) {
      this.variables.push({
        component: 'TariffCostCtrlr',
        variable: 'Available',
        instance,
        value,
        mutability: 'ReadOnly',
        dataType: 'boolean',
        isValid: () => false,
      });
      const enabled = this.find('TariffCostCtrlr', 'Enabled', instance);
      if (enabled) enabled.value = value;
      else this.variables.push({ ...costFlag('TariffCostCtrlr', 'Enabled', instance), value });
      const switched = this.find('TariffCostCtrlr', 'Enabled', instance);
      if (switched && !available) switched.isValid = (v) => v.trim().toLowerCase() === 'false';
    }
    if (!this.has('TariffCostCtrlr', 'Currency')) this.variables.push(currencyVariable());
  }

  /** A reboot: changes that awaited it take effect. */
  rebooted(): void {
    for (const definition of this.variables) delete definition.inEffect;
  }

  getInteger(component: string, variable: string): number {
    return Number(this.get(component, variable));
  }

  getBoolean(component: string, variable: string, instance?: string): boolean {
    return this.get(component, variable, instance).toLowerCase() === 'true';
  }

  getMeasurands(component: string, variable: string): SimMeasurand[] {
    return parseMeasurandList(this.get(component, variable)) ?? [];
  }

  getList(component: string, variable: string): string[] {
    return this.get(component, variable)
      .split(',')
      .map((member) => member.trim())
      .filter((member) => member.length > 0);
  }

  /** Internal updates (e.g. the boot interval) that bypass mutability checks. */
  setInternal(component: string, variable: string, value: string): void {
    const definition = this.find(component, variable);
    if (!definition) throw new Error(`unknown variable ${component}.${variable}`);
    definition.value = value;
  }

  read(component: Component, variable: Variable, attributeType?: Attribute): GetVariableResult {
    const result: GetVariableResult = {
      attributeStatus: 'Accepted',
      component,
      variable,
      ...(attributeType ? { attributeType } : {}),
    };
    const definition = this.find(component.name, variable.name, variable.instance);
    if (!definition) {
      const known = this.knowsComponent(component);
      return { ...result, attributeStatus: known ? 'UnknownVariable' : 'UnknownComponent' };
    }
    if (attributeType && attributeType !== 'Actual') {
      return { ...result, attributeStatus: 'NotSupportedAttributeType' };
    }
    return { ...result, attributeValue: definition.value };
  }

  /** Applies a SetVariables entry; the caller reacts to Accepted changes. */
  write(
    component: Component,
    variable: Variable,
    value: string,
    attributeType?: Attribute,
  ): SetOutcome {
    const definition = this.find(component.name, variable.name, variable.instance);
    if (!definition) return this.knowsComponent(component) ? 'UnknownVariable' : 'UnknownComponent';
    if (attributeType && attributeType !== 'Actual') return 'NotSupportedAttributeType';
    if (definition.mutability === 'ReadOnly' || !definition.isValid(value)) return 'Rejected';
    if (definition.rebootRequired) definition.inEffect ??= definition.value;
    definition.value = value.trim();
    return definition.rebootRequired ? 'RebootRequired' : 'Accepted';
  }

  report(): ReportData[] {
    return this.variables.map((definition) => ({
      component: { name: definition.component },
      variable: {
        name: definition.variable,
        ...(definition.instance ? { instance: definition.instance } : {}),
      },
      variableAttribute: [
        {
          type: 'Actual',
          value: definition.value,
          mutability: definition.mutability,
          persistent: true,
          constant: false,
        },
      ],
      variableCharacteristics: {
        dataType: definition.dataType,
        ...(definition.unit ? { unit: definition.unit } : {}),
        ...(definition.valuesList ? { valuesList: definition.valuesList } : {}),
        supportsMonitoring: false,
      },
    }));
  }
}
