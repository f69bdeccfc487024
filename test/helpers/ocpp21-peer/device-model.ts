import { OCPP21 } from 'typed-ocpp';

type Mutability = 'ReadOnly' | 'ReadWrite';

/** Names the station's variables by `Component.Variable` (one instance each, no EVSE). */
const INITIAL: Record<string, [string, Mutability]> = {
  'OCPPCommCtrlr.HeartbeatInterval': ['300', 'ReadWrite'],
  'OCPPCommCtrlr.WebSocketPingInterval': ['30', 'ReadWrite'],
  'SampledDataCtrlr.TxUpdatedInterval': ['60', 'ReadWrite'],
  'SampledDataCtrlr.TxUpdatedMeasurands': ['Energy.Active.Import.Register', 'ReadWrite'],
  'SampledDataCtrlr.TxStartedMeasurands': ['', 'ReadWrite'],
  'SampledDataCtrlr.TxEndedMeasurands': ['', 'ReadWrite'],
  'AlignedDataCtrlr.Interval': ['0', 'ReadWrite'],
  'AlignedDataCtrlr.Measurands': ['', 'ReadWrite'],
  'TxCtrlr.EVConnectionTimeOut': ['60', 'ReadWrite'],
  'TxCtrlr.StopTxOnInvalidId': ['false', 'ReadWrite'],
  'TxCtrlr.TxStartPoint': ['PowerPathClosed', 'ReadWrite'],
  'TxCtrlr.TxStopPoint': ['EVConnected', 'ReadWrite'],
  'AuthCtrlr.AuthorizeRemoteStart': ['false', 'ReadWrite'],
  'SmartChargingCtrlr.RateUnit': ['A,W', 'ReadOnly'],
  'LocalAuthListCtrlr.Enabled': ['true', 'ReadWrite'],
};

const MEASURANDS = new Set<string>(
  (OCPP21.schemas.MeterValuesRequest.definitions.MeasurandEnumType as { enum: string[] }).enum,
);
const MEASURAND_LISTS = new Set([
  'SampledDataCtrlr.TxUpdatedMeasurands',
  'SampledDataCtrlr.TxStartedMeasurands',
  'SampledDataCtrlr.TxEndedMeasurands',
  'AlignedDataCtrlr.Measurands',
]);
const NUMBERS = new Set([
  'OCPPCommCtrlr.HeartbeatInterval',
  'OCPPCommCtrlr.WebSocketPingInterval',
  'SampledDataCtrlr.TxUpdatedInterval',
  'AlignedDataCtrlr.Interval',
  'TxCtrlr.EVConnectionTimeOut',
]);
const BOOLEANS = new Set(['TxCtrlr.StopTxOnInvalidId', 'AuthCtrlr.AuthorizeRemoteStart']);

interface Named {
  component: { name: string; instance?: string; evse?: unknown };
  variable: { name: string; instance?: string };
}

/**
 * The station's device model, answering GetVariables and SetVariables by the rules a strict
 * station keeps: an unknown component or variable is named as such, a read-only one is refused,
 * and a value of the wrong kind (a measurand 2.1 does not define, a number that is not one) is
 * Rejected rather than taken.
 */
export class DeviceModel {
  private readonly values = new Map(Object.entries(INITIAL).map(([k, [v]]) => [k, v]));

  value(key: string): string | undefined {
    return this.values.get(key);
  }

  get(params: { getVariableData: (Named & { attributeType?: string })[] }): object {
    return {
      getVariableResult: params.getVariableData.map((d) => {
        const status = this.known(d);
        const found = status === 'Accepted' && (d.attributeType ?? 'Actual') === 'Actual';
        return {
          attributeStatus: found || status !== 'Accepted' ? status : 'NotSupportedAttributeType',
          ...(found && { attributeValue: this.values.get(keyOf(d)), attributeType: 'Actual' }),
          component: d.component,
          variable: d.variable,
        };
      }),
    };
  }

  set(params: { setVariableData: (Named & { attributeValue: string })[] }): object {
    return {
      setVariableResult: params.setVariableData.map((d) => {
        let status: string = this.known(d);
        const key = keyOf(d);
        if (status === 'Accepted') {
          status =
            INITIAL[key]?.[1] === 'ReadOnly' || !valid(key, d.attributeValue)
              ? 'Rejected'
              : 'Accepted';
        }
        if (status === 'Accepted') this.values.set(key, d.attributeValue);
        return { attributeStatus: status, component: d.component, variable: d.variable };
      }),
    };
  }

  private known(d: Named): 'Accepted' | 'UnknownComponent' | 'UnknownVariable' {
    const prefix = `${d.component.name}.`;
    if (d.component.instance !== undefined || d.component.evse !== undefined)
      return 'UnknownComponent';
    if (![...this.values.keys()].some((k) => k.startsWith(prefix))) return 'UnknownComponent';
    if (d.variable.instance !== undefined || !this.values.has(keyOf(d))) return 'UnknownVariable';
    return 'Accepted';
  }
}

function keyOf(d: Named): string {
  return `${d.component.name}.${d.variable.name}`;
}

function valid(key: string, value: string): boolean {
  if (MEASURAND_LISTS.has(key))
    return value === '' || value.split(',').every((m) => MEASURANDS.has(m));
  if (NUMBERS.has(key)) return /^\d+$/.test(value);
  if (BOOLEANS.has(key)) return value === 'true' || value === 'false';
  return true;
}
