import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES16 } from '../src/ocpp/v16/routes.js';
import { ROUTES201 } from '../src/ocpp/v201/routes.js';
import { CHARGER_PASSWORD, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { rawCharger } from './helpers/raw-charger.js';
import { raw16, raw201 } from './helpers/raw-stations.js';
import { harness } from './helpers/session-harness.js';

/**
 * Every call a charger may send to the central system (docs/ocpp.md "What a charger may tell
 * us"): the 1.6 core and security whitepaper, all of 2.0.1's. Each is answered with a
 * schema-valid reply, never NotImplemented, even those the gateway does nothing with: a charger
 * resends a call refused with a CALLERROR, and may queue it for ever.
 */

interface Validator {
  subprotocol: string;
  validate(id: string, params: unknown): void;
}
const validators = createRequire(import.meta.url)(
  'ocpp-rpc/lib/standard-validators.js',
) as Validator[];
const validator = (subprotocol: string) => validators.find((v) => v.subprotocol === subprotocol)!;

const now = () => new Date().toISOString();
const schedule = {
  id: 1,
  chargingRateUnit: 'W',
  chargingSchedulePeriod: [{ startPeriod: 0, limit: 7_000 }],
};

/** One schema-valid call per action a 1.6 charge point sends (core and security whitepaper). */
const CALLS16: Record<string, () => Record<string, unknown>> = {
  Authorize: () => ({ idTag: 'RFID-NOT-OURS' }),
  BootNotification: () => ({ chargePointVendor: 'Acme', chargePointModel: 'AC22' }),
  DataTransfer: () => ({ vendorId: 'com.acme' }),
  DiagnosticsStatusNotification: () => ({ status: 'Idle' }),
  FirmwareStatusNotification: () => ({ status: 'Idle' }),
  Heartbeat: () => ({}),
  LogStatusNotification: () => ({ status: 'Uploading', requestId: 7 }),
  MeterValues: () => ({
    connectorId: 1,
    meterValue: [{ timestamp: now(), sampledValue: [{ value: '21.5', measurand: 'SoC' }] }],
  }),
  SecurityEventNotification: () => ({ type: 'StartupOfTheDevice', timestamp: now() }),
  SignCertificate: () => ({
    csr: '-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----',
  }),
  SignedFirmwareStatusNotification: () => ({ status: 'SignatureVerified', requestId: 3 }),
  StartTransaction: () => ({
    connectorId: 2,
    idTag: 'RFID-NOT-OURS',
    meterStart: 0,
    timestamp: now(),
  }),
  StatusNotification: () => ({ connectorId: 2, errorCode: 'NoError', status: 'Available' }),
  StopTransaction: () => ({ transactionId: 987_654, meterStop: 10, timestamp: now() }),
};

/** One schema-valid call per action a 2.0.1 charging station sends. */
const CALLS201: Record<string, () => Record<string, unknown>> = {
  Authorize: () => ({ idToken: { idToken: 'RFID-NOT-OURS', type: 'ISO14443' } }),
  BootNotification: () => ({
    reason: 'PowerUp',
    chargingStation: { vendorName: 'Acme', model: 'DC150' },
  }),
  ClearedChargingLimit: () => ({ chargingLimitSource: 'EMS', evseId: 1 }),
  DataTransfer: () => ({ vendorId: 'com.acme' }),
  FirmwareStatusNotification: () => ({ status: 'Idle' }),
  Get15118EVCertificate: () => ({
    iso15118SchemaVersion: 'urn:iso:15118:2:2013:MsgDef',
    action: 'Install',
    exiRequest: 'gDCBBQ==',
  }),
  GetCertificateStatus: () => ({
    ocspRequestData: {
      hashAlgorithm: 'SHA256',
      issuerNameHash: 'a1',
      issuerKeyHash: 'b2',
      serialNumber: 'c3',
      responderURL: 'http://ocsp.example',
    },
  }),
  Heartbeat: () => ({}),
  LogStatusNotification: () => ({ status: 'Idle' }),
  MeterValues: () => ({
    evseId: 2,
    meterValue: [{ timestamp: now(), sampledValue: [{ value: 40, measurand: 'SoC' }] }],
  }),
  NotifyChargingLimit: () => ({ chargingLimit: { chargingLimitSource: 'EMS' }, evseId: 1 }),
  NotifyCustomerInformation: () => ({ data: 'none', seqNo: 0, generatedAt: now(), requestId: 1 }),
  NotifyDisplayMessages: () => ({ requestId: 1 }),
  NotifyEVChargingNeeds: () => ({ evseId: 2, chargingNeeds: { requestedEnergyTransfer: 'DC' } }),
  NotifyEVChargingSchedule: () => ({ timeBase: now(), evseId: 2, chargingSchedule: schedule }),
  NotifyEvent: () => ({
    generatedAt: now(),
    seqNo: 0,
    eventData: [
      {
        eventId: 1,
        timestamp: now(),
        trigger: 'Alerting',
        actualValue: 'true',
        eventNotificationType: 'HardWiredNotification',
        component: { name: 'EVSE' },
        variable: { name: 'Problem' },
      },
    ],
  }),
  NotifyMonitoringReport: () => ({ requestId: 1, seqNo: 0, generatedAt: now() }),
  NotifyReport: () => ({ requestId: 1, seqNo: 0, generatedAt: now() }),
  PublishFirmwareStatusNotification: () => ({ status: 'Idle' }),
  ReportChargingProfiles: () => ({
    requestId: 1,
    chargingLimitSource: 'CSO',
    evseId: 2,
    chargingProfile: [
      {
        id: 9,
        stackLevel: 0,
        chargingProfilePurpose: 'TxDefaultProfile',
        chargingProfileKind: 'Absolute',
        chargingSchedule: [schedule],
      },
    ],
  }),
  ReservationStatusUpdate: () => ({ reservationId: 1, reservationUpdateStatus: 'Expired' }),
  SecurityEventNotification: () => ({
    type: 'FailedToAuthenticateAtCsms',
    timestamp: now(),
    techInfo: 'wrong password',
  }),
  SignCertificate: () => ({
    csr: '-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----',
  }),
  StatusNotification: () => ({
    timestamp: now(),
    connectorStatus: 'Available',
    evseId: 2,
    connectorId: 1,
  }),
  TransactionEvent: () => ({
    eventType: 'Updated',
    timestamp: now(),
    triggerReason: 'MeterValuePeriodic',
    seqNo: 0,
    transactionInfo: { transactionId: 'not-ours-1' },
  }),
};

const PROTOCOLS = [
  { subprotocol: 'ocpp1.6', calls: CALLS16, routes: ROUTES16 },
  { subprotocol: 'ocpp2.0.1', calls: CALLS201, routes: ROUTES201 },
];

describe.each(PROTOCOLS)(
  'a station’s own calls: $subprotocol',
  ({ subprotocol, calls, routes }) => {
    let t: TestGateway;
    beforeAll(async () => {
      t = await startTestGateway();
    });
    afterAll(async () => {
      await t.close();
    });

    it('the list is every call the gateway routes', () => {
      expect(Object.keys(calls).sort()).toEqual(Object.keys(routes).sort());
    });

    it.each(Object.keys(calls))('%s is answered with a schema-valid reply', async (action) => {
      const params = calls[action]!();
      validator(subprotocol).validate(`urn:${action}.req`, params);
      const cp = await rawCharger(t.gw.ocppUrl, 'CP-1', CHARGER_PASSWORD, [subprotocol]);
      try {
        const reply = await cp.call(action, params);
        validator(subprotocol).validate(`urn:${action}.conf`, reply);
      } finally {
        await cp.close({ force: true });
      }
    });

    it('a security event is kept with its type', async () => {
      const cp = await rawCharger(t.gw.ocppUrl, 'CP-1', CHARGER_PASSWORD, [subprotocol]);
      const params = { type: 'TamperDetectionActivated', timestamp: now(), techInfo: 'lid open' };
      expect(await cp.call('SecurityEventNotification', params)).toEqual({});
      await cp.close({ force: true });
      const kept = t.gw.db
        .prepare(
          "SELECT note, payload FROM ocpp_events WHERE charger_id = 'CP-1' AND action = 'SecurityEventNotification' ORDER BY seq DESC LIMIT 1",
        )
        .get() as { note: string; payload: string };
      expect(kept.note).toBe('TamperDetectionActivated');
      expect(JSON.parse(kept.payload)).toMatchObject({ techInfo: 'lid open' });
    });
  },
);

describe.each([raw16, raw201])('security events during a paid session: $name', (protocol) => {
  const h = harness({});

  it('seven SecurityEventNotifications in one session are each answered; the session settles once', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const { tx } = await station.start(10_000);
    for (let i = 0; i < 7; i++) {
      await station.send(station.sample(tx, 10_000 + (i + 1) * 100));
      const reply = await station.send({
        action: 'SecurityEventNotification',
        params: { type: 'InvalidMessages', timestamp: now(), techInfo: `#${i}` },
      });
      expect(reply).toEqual({});
    }
    await station.send(station.end(tx, 11_000));
    h.settledOnce(sessionId, 1_000);
  });
});
