import type { OcppVersion } from './protocol.js';

/**
 * OCPP-J CALL payloads of both protocols, as the bench chargers send them (the shapes of
 * test/helpers/raw-stations.ts, trimmed to what a charger in a session sends). Built as plain
 * objects and stringified once per message: the generator must cost far less than the server.
 */

export type Payload = Record<string, unknown>;

export interface Call {
  action: string;
  params: Payload;
}

export interface TxStart {
  connector: number;
  idToken: string;
  /** 2.0.1: the gateway's remoteStartId, when the start was remote. */
  remoteStartId?: number;
  /** 2.0.1: the id the station gives its transaction. */
  transactionId: string;
}

export interface FrameSet {
  boot(): Call;
  available(connector: number): Call;
  start(tx: TxStart, registerWh: number, timestamp: string): Call;
  /** `ref`: the transaction as the server knows it; `seqNo` counts every 2.0.1 event of it. */
  sample(
    ref: string,
    connector: number,
    registerWh: number,
    timestamp: string,
    seqNo: number,
  ): Call;
  heartbeat(): Call;
  /**
   * The reply to a server CALL, or undefined when the charger knows no answer. `settings`: the
   * station's own configuration (1.6 keys, 2.0.1 `Component.Variable`), kept across its
   * connections as real chargers keep it.
   */
  answer(action: string, params: Payload, settings: Map<string, string>): Payload | undefined;
}

const register = { measurand: 'Energy.Active.Import.Register' };

const v16: FrameSet = {
  boot: () => ({
    action: 'BootNotification',
    params: { chargePointVendor: 'Bench', chargePointModel: 'DC150' },
  }),
  available: (connector) => ({
    action: 'StatusNotification',
    params: { connectorId: connector, errorCode: 'NoError', status: 'Available' },
  }),
  start: (tx, registerWh, timestamp) => ({
    action: 'StartTransaction',
    params: { connectorId: tx.connector, idTag: tx.idToken, meterStart: registerWh, timestamp },
  }),
  sample: (ref, connector, registerWh, timestamp) => ({
    action: 'MeterValues',
    params: {
      connectorId: connector,
      transactionId: Number(ref),
      meterValue: [
        {
          timestamp,
          sampledValue: [
            { ...register, context: 'Sample.Periodic', value: String(registerWh), unit: 'Wh' },
          ],
        },
      ],
    },
  }),
  heartbeat: () => ({ action: 'Heartbeat', params: {} }),
  answer: (action, params, settings) => {
    switch (action) {
      case 'ChangeConfiguration':
        settings.set(String(params.key), String(params.value));
        return { status: 'Accepted' };
      case 'RemoteStartTransaction':
      case 'RemoteStopTransaction':
      case 'TriggerMessage':
        return { status: 'Accepted' };
      case 'GetConfiguration': {
        const keys = (params.key ?? [...settings.keys()]) as string[];
        return {
          configurationKey: keys.flatMap((key) => {
            const value = settings.get(key);
            return value === undefined ? [] : [{ key, readonly: false, value }];
          }),
          unknownKey: keys.filter((key) => !settings.has(key)),
        };
      }
      default:
        return undefined;
    }
  },
};

const meter201 = (registerWh: number, timestamp: string, context: string) => [
  {
    timestamp,
    sampledValue: [{ ...register, context, value: registerWh, unitOfMeasure: { unit: 'Wh' } }],
  },
];

interface VariableData {
  component: { name: string };
  variable: { name: string };
  attributeValue?: string;
}

const variableKey = (d: VariableData) => `${d.component.name}.${d.variable.name}`;

const v201: FrameSet = {
  boot: () => ({
    action: 'BootNotification',
    params: { reason: 'PowerUp', chargingStation: { vendorName: 'Bench', model: 'DC150' } },
  }),
  available: (connector) => ({
    action: 'StatusNotification',
    params: {
      timestamp: new Date().toISOString(),
      connectorStatus: 'Available',
      evseId: connector,
      connectorId: 1,
    },
  }),
  start: (tx, registerWh, timestamp) => ({
    action: 'TransactionEvent',
    params: {
      eventType: 'Started',
      timestamp,
      triggerReason: tx.remoteStartId === undefined ? 'Authorized' : 'RemoteStart',
      seqNo: 0,
      transactionInfo: {
        transactionId: tx.transactionId,
        chargingState: 'Charging',
        ...(tx.remoteStartId !== undefined && { remoteStartId: tx.remoteStartId }),
      },
      idToken: { idToken: tx.idToken, type: 'Central' },
      evse: { id: tx.connector, connectorId: 1 },
      meterValue: meter201(registerWh, timestamp, 'Transaction.Begin'),
    },
  }),
  sample: (ref, _connector, registerWh, timestamp, seqNo) => ({
    action: 'TransactionEvent',
    params: {
      eventType: 'Updated',
      timestamp,
      triggerReason: 'MeterValuePeriodic',
      seqNo,
      transactionInfo: { transactionId: ref },
      meterValue: meter201(registerWh, timestamp, 'Sample.Periodic'),
    },
  }),
  heartbeat: () => ({ action: 'Heartbeat', params: {} }),
  answer: (action, params, settings) => {
    switch (action) {
      case 'SetVariables': {
        const data = (params.setVariableData ?? []) as VariableData[];
        for (const d of data) settings.set(variableKey(d), d.attributeValue ?? '');
        return {
          setVariableResult: data.map((d) => ({
            attributeStatus: 'Accepted',
            component: d.component,
            variable: d.variable,
          })),
        };
      }
      // The gateway reads what the station holds before setting, and the measurands after.
      case 'GetVariables': {
        const data = (params.getVariableData ?? []) as VariableData[];
        return {
          getVariableResult: data.map((d) => {
            const value = settings.get(variableKey(d));
            return {
              attributeStatus: value === undefined ? 'UnknownVariable' : 'Accepted',
              component: d.component,
              variable: d.variable,
              ...(value === undefined ? {} : { attributeValue: value }),
            };
          }),
        };
      }
      case 'RequestStartTransaction':
      case 'RequestStopTransaction':
      case 'TriggerMessage':
        return { status: 'Accepted' };
      default:
        return undefined;
    }
  },
};

export const FRAMES: Record<OcppVersion, FrameSet> = { 'ocpp1.6': v16, 'ocpp2.0.1': v201 };
