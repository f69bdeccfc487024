import { randomUUID } from 'node:crypto';
import { CHARGER_PASSWORD } from './gateway.js';
import { rawCharger, type RawClient } from './raw-charger.js';

/**
 * Raw-frame chargers of both protocols behind one shape, so a misbehaviour test is written once
 * and run against OCPP 1.6J and 2.0.1: each builds the frames its protocol uses for a transaction
 * start, a meter sample, an end and a connector status, and answers the gateway's commands as the
 * test tells it to. Frames are returned before sending, so a test can send one twice or late.
 */

export interface Frame {
  action: string;
  params: Record<string, unknown>;
}

/** How a meter value is written: what real chargers do with units, strings and multipliers. */
export type MeterFormat = 'Wh' | 'kWh' | 'no unit' | 'decimal-comma string' | 'multiplier 3';

/** The gateway's remote start, whichever protocol carried it. */
export interface RemoteStart {
  connector: number;
  idToken: string;
  remoteStartId?: number;
}

/** A transaction as the station knows it: `ref` is what the gateway stores as transaction_ref. */
export interface StationTx {
  ref: string;
  connector: number;
  idToken: string;
}

export type StopReply = 'Accepted' | 'Rejected' | 'no answer';

interface Timing {
  timestamp?: string;
  /** 2.0.1 `offline: true`; 1.6 has no such flag (the old timestamp is all the gateway sees). */
  offline?: boolean;
  /** 2.0.1 only: a Started or Ended event without a meter value (1.6 requires its registers). */
  noRegister?: boolean;
}

export interface RawStation {
  cp: RawClient;
  remoteStarts: RemoteStart[];
  /** The transaction refs of every stop the gateway sent, in order. */
  stops: string[];
  /** Replies to the next stops, in order; once used up every stop is Accepted. */
  stopReplies: StopReply[];
  /** BootNotification and every connector Available. */
  boot(): Promise<void>;
  /** Only the BootNotification: a charger back from a reboot with its transaction still going. */
  reboot(): Promise<void>;
  /** Drops the connection and opens a new one; transactions and sequence numbers carry on. */
  reconnect(): Promise<void>;
  /**
   * Starts the transaction the last remote start asked for. `transactionId`: 2.0.1 the id the
   * station names it by; 1.6 the id it uses afterwards instead of the one the gateway assigned
   * (a charger that lost the StartTransaction reply sends 0 or -1). `chargingState`: 2.0.1 only
   * (default Charging; Idle for a transaction started before the cable is plugged in).
   */
  start(
    registerWh: number,
    o?: Timing & { transactionId?: string; format?: MeterFormat; chargingState?: string },
  ): Promise<{ tx: StationTx; frame: Frame; reply: unknown }>;
  sample(tx: StationTx, registerWh: number, o?: Timing & { format?: MeterFormat }): Frame;
  /** `idTag`: name the transaction's token in the stop (1.6; 2.0.1 ends name none here). */
  end(
    tx: StationTx,
    registerWh: number,
    o?: Timing & { reason?: string; format?: MeterFormat; idTag?: boolean },
  ): Frame;
  /** 2.0.1 says Occupied for Charging and Preparing (its statuses do not tell them apart). */
  status(connector: number, status: 'Available' | 'Preparing' | 'Charging'): Frame;
  send(frame: Frame): Promise<unknown>;
  close(): Promise<void>;
}

export interface RawProtocol {
  name: string;
  /** Meter formats this protocol can express. */
  formats: MeterFormat[];
  connect(ocppUrl: string, identity: string): Promise<RawStation>;
}

const now = () => new Date().toISOString();

function value16(wh: number, format: MeterFormat): Record<string, unknown> {
  const register = { measurand: 'Energy.Active.Import.Register', context: 'Sample.Periodic' };
  switch (format) {
    case 'kWh':
      return { ...register, value: String(wh / 1000), unit: 'kWh' };
    case 'no unit':
      return { value: String(wh) };
    case 'decimal-comma string':
      return { ...register, value: ` ${(wh / 1000).toFixed(3).replace('.', ',')} `, unit: 'kWh' };
    default:
      return { ...register, value: String(wh), unit: 'Wh' };
  }
}

function value201(wh: number, format: MeterFormat, context: string): Record<string, unknown> {
  const register = { measurand: 'Energy.Active.Import.Register', context };
  switch (format) {
    case 'kWh':
      return { ...register, value: wh / 1000, unitOfMeasure: { unit: 'kWh' } };
    case 'no unit':
      return { value: wh, context };
    case 'multiplier 3':
      return { ...register, value: wh / 1000, unitOfMeasure: { unit: 'Wh', multiplier: 3 } };
    default:
      return { ...register, value: wh, unitOfMeasure: { unit: 'Wh' } };
  }
}

/** What a RemoteStartTransaction (1.6) or RequestStartTransaction (2.0.1) asks for. */
export function remoteStartOf(params: unknown): RemoteStart {
  const p = params as {
    connectorId?: number;
    idTag?: string;
    evseId?: number;
    remoteStartId?: number;
    idToken?: { idToken: string };
  };
  if (p.idToken === undefined) return { connector: p.connectorId ?? 0, idToken: p.idTag ?? '' };
  return { connector: p.evseId ?? 0, idToken: p.idToken.idToken, remoteStartId: p.remoteStartId };
}

/** Answers the gateway's settings and stops; records its remote starts and stops. */
function stopHandler(station: Pick<RawStation, 'stops' | 'stopReplies'>) {
  return (transactionRef: string) => {
    station.stops.push(transactionRef);
    const reply = station.stopReplies.shift() ?? 'Accepted';
    // An unanswered stop: the gateway's call times out.
    if (reply === 'no answer') return new Promise<never>(() => undefined);
    return Promise.resolve({ status: reply });
  };
}

type Handlers = (cp: RawClient, station: RawStation) => void;

/** Opens the connection and gives the station's handlers to it; reconnect() does it again. */
async function opened(
  ocppUrl: string,
  identity: string,
  protocol: string,
  handlers: Handlers,
  build: (open: () => Promise<RawClient>) => Promise<RawStation>,
): Promise<RawStation> {
  // The first connection is made before the station exists; reconnections get its handlers here.
  const built: { station?: RawStation } = {};
  const open = async () => {
    const cp = await rawCharger(ocppUrl, identity, CHARGER_PASSWORD, [protocol]);
    if (built.station) handlers(cp, built.station);
    return cp;
  };
  const station = await build(open);
  built.station = station;
  handlers(station.cp, station);
  return station;
}

function shared(open: () => Promise<RawClient>, cp: RawClient) {
  return {
    cp,
    remoteStarts: [] as RemoteStart[],
    stops: [] as string[],
    stopReplies: [] as StopReply[],
    send(this: RawStation, frame: Frame) {
      return this.cp.call(frame.action, frame.params);
    },
    async reconnect(this: RawStation) {
      await this.cp.close({ force: true });
      this.cp = await open();
    },
    async close(this: RawStation) {
      await this.cp.close({ force: true });
    },
  };
}

const handlers16: Handlers = (cp, station) => {
  const stop = stopHandler(station);
  cp.handle('ChangeConfiguration', async () => ({ status: 'Accepted' }));
  cp.handle('RemoteStartTransaction', async ({ params }) => {
    station.remoteStarts.push(remoteStartOf(params));
    return { status: 'Accepted' };
  });
  cp.handle('RemoteStopTransaction', ({ params }) =>
    stop(String((params as { transactionId: number }).transactionId)),
  );
};

export const raw16: RawProtocol = {
  name: 'OCPP 1.6J',
  formats: ['Wh', 'kWh', 'no unit', 'decimal-comma string'],
  connect: (ocppUrl, identity) =>
    opened(ocppUrl, identity, 'ocpp1.6', handlers16, async (open) => {
      const station: RawStation = {
        ...shared(open, await open()),
        async reboot() {
          await station.send({
            action: 'BootNotification',
            params: { chargePointVendor: 'Acme', chargePointModel: 'AC22' },
          });
        },
        async boot() {
          await station.reboot();
          for (const connector of [1, 2])
            await station.send(station.status(connector, 'Available'));
        },
        async start(registerWh, o = {}) {
          const remote = station.remoteStarts.at(-1) as RemoteStart;
          const frame: Frame = {
            action: 'StartTransaction',
            params: {
              connectorId: remote.connector,
              idTag: remote.idToken,
              meterStart: registerWh,
              timestamp: o.timestamp ?? now(),
            },
          };
          const reply = (await station.send(frame)) as { transactionId: number };
          const tx = {
            ref: o.transactionId ?? String(reply.transactionId),
            connector: remote.connector,
            idToken: remote.idToken,
          };
          return { tx, frame, reply };
        },
        sample(tx, registerWh, o = {}) {
          const sampledValue = [value16(registerWh, o.format ?? 'Wh')];
          return {
            action: 'MeterValues',
            params: {
              connectorId: tx.connector,
              transactionId: Number(tx.ref),
              meterValue: [{ timestamp: o.timestamp ?? now(), sampledValue }],
            },
          };
        },
        end(tx, registerWh, o = {}) {
          const timestamp = o.timestamp ?? now();
          const final = { ...value16(registerWh, o.format ?? 'Wh'), context: 'Transaction.End' };
          return {
            action: 'StopTransaction',
            params: {
              transactionId: Number(tx.ref),
              meterStop: registerWh,
              timestamp,
              reason: o.reason ?? 'Local',
              ...(o.idTag && { idTag: tx.idToken }),
              transactionData: [{ timestamp, sampledValue: [final] }],
            },
          };
        },
        status(connector, status) {
          return {
            action: 'StatusNotification',
            params: { connectorId: connector, errorCode: 'NoError', status },
          };
        },
      };
      return station;
    }),
};

/** A 2.0.1 station's answer to SetVariables: every setting Accepted. */
export function acceptVariables(params: unknown) {
  const { setVariableData } = params as {
    setVariableData: { component: object; variable: object }[];
  };
  return {
    setVariableResult: setVariableData.map((d) => ({
      attributeStatus: 'Accepted',
      component: d.component,
      variable: d.variable,
    })),
  };
}

const handlers201: Handlers = (cp, station) => {
  const stop = stopHandler(station);
  cp.handle('SetVariables', async ({ params }) => acceptVariables(params));
  cp.handle('RequestStartTransaction', async ({ params }) => {
    station.remoteStarts.push(remoteStartOf(params));
    return { status: 'Accepted' };
  });
  cp.handle('RequestStopTransaction', ({ params }) =>
    stop((params as { transactionId: string }).transactionId),
  );
};

/** A raw station of 2.0.1's message model, on 2.0.1 or on its successor 2.1 (same frames). */
const raw201Family = (name: string, subprotocol: 'ocpp2.0.1' | 'ocpp2.1'): RawProtocol => ({
  name,
  formats: ['Wh', 'kWh', 'no unit', 'multiplier 3'],
  connect: (ocppUrl, identity) =>
    opened(ocppUrl, identity, subprotocol, handlers201, async (open) => {
      const seqNos = new Map<string, number>();
      const nextSeq = (ref: string) => {
        const n = seqNos.get(ref) ?? 0;
        seqNos.set(ref, n + 1);
        return n;
      };
      const event = (
        eventType: 'Started' | 'Updated' | 'Ended',
        tx: StationTx,
        triggerReason: string,
        o: Timing,
        extra: Record<string, unknown>,
        transactionInfo: Record<string, unknown> = {},
      ): Frame => ({
        action: 'TransactionEvent',
        params: {
          eventType,
          timestamp: o.timestamp ?? now(),
          triggerReason,
          seqNo: nextSeq(tx.ref),
          ...(o.offline && { offline: true }),
          transactionInfo: { transactionId: tx.ref, ...transactionInfo },
          ...extra,
        },
      });
      const meter = (wh: number, format: MeterFormat, context: string, timestamp?: string) => [
        { timestamp: timestamp ?? now(), sampledValue: [value201(wh, format, context)] },
      ];
      const station: RawStation = {
        ...shared(open, await open()),
        async reboot() {
          await station.send({
            action: 'BootNotification',
            params: { reason: 'PowerUp', chargingStation: { vendorName: 'Acme', model: 'DC150' } },
          });
        },
        async boot() {
          await station.reboot();
          for (const evseId of [1, 2]) await station.send(station.status(evseId, 'Available'));
        },
        async start(registerWh, o = {}) {
          const remote = station.remoteStarts.at(-1) as RemoteStart;
          const tx = {
            ref: o.transactionId ?? randomUUID(),
            connector: remote.connector,
            idToken: remote.idToken,
          };
          const frame = event(
            'Started',
            tx,
            'RemoteStart',
            o,
            {
              idToken: { idToken: remote.idToken, type: 'Central' },
              evse: { id: remote.connector, connectorId: 1 },
              ...(!o.noRegister && {
                meterValue: meter(registerWh, o.format ?? 'Wh', 'Transaction.Begin', o.timestamp),
              }),
            },
            { chargingState: o.chargingState ?? 'Charging', remoteStartId: remote.remoteStartId },
          );
          const reply = await station.send(frame);
          return { tx, frame, reply };
        },
        sample(tx, registerWh, o = {}) {
          return event('Updated', tx, 'MeterValuePeriodic', o, {
            meterValue: meter(registerWh, o.format ?? 'Wh', 'Sample.Periodic', o.timestamp),
          });
        },
        end(tx, registerWh, o = {}) {
          return event(
            'Ended',
            tx,
            'StopAuthorized',
            o,
            o.noRegister
              ? {}
              : { meterValue: meter(registerWh, o.format ?? 'Wh', 'Transaction.End', o.timestamp) },
            { stoppedReason: o.reason ?? 'Local' },
          );
        },
        status(connector, status) {
          return {
            action: 'StatusNotification',
            params: {
              timestamp: now(),
              connectorStatus: status === 'Available' ? status : 'Occupied',
              evseId: connector,
              connectorId: 1,
            },
          };
        },
      };
      return station;
    }),
});

export const raw201 = raw201Family('OCPP 2.0.1', 'ocpp2.0.1');
/** Not in RAW_PROTOCOLS: the 2.1 tests run the paths 2.1 shares with 2.0.1 once, not each case. */
export const raw21 = raw201Family('OCPP 2.1', 'ocpp2.1');

export const RAW_PROTOCOLS: RawProtocol[] = [raw16, raw201];
