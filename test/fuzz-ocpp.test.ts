import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import {
  API_KEY,
  CHARGER_PASSWORD,
  DRIVERS,
  startTestGateway,
  type TestGateway,
} from './helpers/gateway.js';
import { mintToken, startSession } from './helpers/http.js';
import { hostileString, hostileValue } from './helpers/hostile.js';
import { IONIQ, ocpp16, ocpp201, type ProtocolUnderTest } from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';

/** OCPP-J RPC framework error codes (1.6 spells one of them FormationViolation). */
const RPC_ERRORS = new Set([
  'NotImplemented',
  'NotSupported',
  'ProtocolError',
  'SecurityError',
  'FormatViolation',
  'FormationViolation',
  'PropertyConstraintViolation',
  'OccurenceConstraintViolation',
  'OccurrenceConstraintViolation',
  'TypeConstraintViolation',
  'GenericError',
  'RpcFrameworkError',
  'MessageTypeNotSupported',
]);
const INTERNALS = /\bat .+:\d+|node_modules|\/work\/|\.ts:\d|\.js:\d|SQLITE|Cannot read/;

interface Victim {
  chargerId: string;
  transactionId: string | number;
  idTag: string;
}

let t: TestGateway;
const victims: Victim[] = [];

/** A charger with a paid session charging on it, then gone offline: the fuzzer's targets. */
async function victim(protocol: ProtocolUnderTest, chargerId: string): Promise<Victim> {
  const cp = await protocol.connect(t.gw.ocppUrl, chargerId, { timeFactor: 1 });
  try {
    await cp.plugIn(1, IONIQ);
    const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
    const started = cp.waitFor('transactionStarted', (e) => e.connectorId === 1);
    const target = { chargerId, connectorId: '1', driverEmail: DRIVERS.ada.email };
    await waitUntil(
      async () => (await startSession(t.gw.url, token, target, 10_000)).status === 200,
      5000,
      `session on ${chargerId}`,
    );
    const tx = await started;
    await waitUntil(
      () =>
        t.gw.db
          .prepare("SELECT 1 FROM sessions WHERE charger_id = ? AND state = 'charging'")
          .get(chargerId),
      5000,
      'charging',
    );
    return { chargerId, transactionId: tx.transactionId, idTag: tx.idTag };
  } finally {
    await cp.disconnect();
  }
}

beforeAll(async () => {
  t = await startTestGateway({
    ocpp: {
      meterSampleIntervalSeconds: 60,
      callTimeoutSeconds: 1,
      messageRate: { perSecond: 10_000, burst: 100_000 },
    },
    sessions: { startTimeoutSeconds: 600, maxAmount: 1_000_000, stopLeadMilliseconds: 0 },
  });
  victims.push(await victim(ocpp16, 'CP-1'), await victim(ocpp201, 'CP-AC'));
});
afterAll(async () => {
  await t.close();
});

function moneySnapshot(): unknown {
  return {
    wallets: t.gw.db.prepare('SELECT * FROM wallets ORDER BY driver_id').all(),
    ledger: t.gw.db.prepare('SELECT * FROM ledger_entries ORDER BY seq').all(),
    sessions: t.gw.db.prepare('SELECT * FROM sessions ORDER BY id').all(),
  };
}

/** A bare WebSocket: sends any text, and collects what comes back until a probe's answer. */
class FuzzSocket {
  private inbox: string[] = [];
  private waiter: { id: string; resolve: (messages: string[]) => void } | undefined;
  closed: { code: number } | undefined;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      const text = data.toString('utf8');
      const w = this.waiter;
      if (w && text.startsWith(`[3,"${w.id}"`)) {
        this.waiter = undefined;
        w.resolve(this.inbox.splice(0));
      } else {
        this.inbox.push(text);
      }
    });
    ws.on('close', (code: number) => {
      this.closed = { code };
    });
  }

  static async open(chargerId: string, protocol: string): Promise<FuzzSocket> {
    const auth = Buffer.from(`${chargerId}:${CHARGER_PASSWORD}`).toString('base64');
    const ws = new WebSocket(`${t.gw.ocppUrl}/${chargerId}`, [protocol], {
      headers: { authorization: `Basic ${auth}` },
    });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    return new FuzzSocket(ws);
  }

  /** Sends `frame`, then a Heartbeat; resolves with every message that came before its answer. */
  async exchange(frame: string, n: number): Promise<string[]> {
    const id = `probe-${n}`;
    const answered = new Promise<string[]>((resolve) => (this.waiter = { id, resolve }));
    this.ws.send(frame);
    this.ws.send(JSON.stringify([2, id, 'Heartbeat', {}]));
    return answered;
  }

  close(): void {
    this.ws.close(1000);
  }
}

const timestamp = fc.oneof(
  { weight: 3, arbitrary: fc.constant(new Date().toISOString()) },
  fc.constantFrom('2026-13-45T99:99:99Z', '1970-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z'),
  hostileValue,
);
const number = fc.oneof(fc.integer({ min: -5, max: 10 }), fc.integer(), hostileValue);

function targets(version: '1.6' | '2.0.1') {
  const tx = fc.oneof(
    fc.constantFrom(...victims.map((v) => v.transactionId)),
    fc.constantFrom(...victims.map((v) => String(v.transactionId))),
    number,
  );
  const idTag = fc.oneof(fc.constantFrom(...victims.map((v) => v.idTag)), hostileString);
  const sample = fc.record({
    value: version === '1.6' ? fc.oneof(fc.constant('99999999'), hostileValue) : number,
    measurand: fc.oneof(
      fc.constantFrom('Energy.Active.Import.Register', 'Power.Active.Import', 'SoC'),
      hostileValue,
    ),
    unit: fc.oneof(fc.constantFrom('Wh', 'kWh', 'W', 'Percent'), hostileValue),
  });
  const meterValue = fc.array(
    fc.record({ timestamp, sampledValue: fc.array(sample, { minLength: 1, maxLength: 3 }) }),
    { minLength: 1, maxLength: 2 },
  );
  return { tx, idTag, meterValue };
}

/** Calls shaped like the real ones of a version, with hostile values where it hurts. */
function calls(version: '1.6' | '2.0.1'): fc.Arbitrary<[string, unknown]> {
  const { tx, idTag, meterValue } = targets(version);
  const common: fc.Arbitrary<[string, unknown]>[] = [
    fc.tuple(fc.constant('Heartbeat'), fc.oneof(fc.constant({}), hostileValue)),
    fc.tuple(
      fc.constant('DataTransfer'),
      fc.record({ vendorId: hostileString, messageId: hostileString, data: hostileString }),
    ),
    fc.tuple(
      fc.oneof(hostileString, fc.constantFrom('RemoteStartTransaction', 'Reset', 'GetVariables')),
      hostileValue,
    ),
  ];
  if (version === '1.6') {
    return fc.oneof(
      ...common,
      fc.tuple(
        fc.constant('StopTransaction'),
        fc.record(
          { transactionId: tx, meterStop: number, timestamp, reason: hostileValue, idTag },
          { requiredKeys: ['transactionId', 'meterStop', 'timestamp'] },
        ),
      ),
      fc.tuple(
        fc.constant('MeterValues'),
        fc.record({ connectorId: number, transactionId: tx, meterValue }),
      ),
      fc.tuple(
        fc.constant('StartTransaction'),
        fc.record({ connectorId: number, idTag, meterStart: number, timestamp }),
      ),
      fc.tuple(
        fc.constant('StatusNotification'),
        fc.record({
          connectorId: number,
          errorCode: fc.oneof(fc.constant('NoError'), hostileValue),
          status: fc.oneof(fc.constantFrom('Available', 'Charging', 'Faulted'), hostileValue),
        }),
      ),
      fc.tuple(fc.constant('Authorize'), fc.record({ idTag })),
    );
  }
  return fc.oneof(
    ...common,
    fc.tuple(
      fc.constant('TransactionEvent'),
      fc.record(
        {
          eventType: fc.oneof(fc.constantFrom('Started', 'Updated', 'Ended'), hostileValue),
          timestamp,
          triggerReason: fc.oneof(
            fc.constantFrom('Authorized', 'StopAuthorized', 'MeterValuePeriodic', 'RemoteStart'),
            hostileValue,
          ),
          seqNo: number,
          offline: fc.boolean(),
          transactionInfo: fc.record(
            {
              transactionId: tx.map((v) => (typeof v === 'number' ? String(v) : v)),
              stoppedReason: fc.oneof(fc.constantFrom('Local', 'EVDisconnected'), hostileValue),
              remoteStartId: number,
            },
            { requiredKeys: ['transactionId'] },
          ),
          evse: fc.record({ id: number, connectorId: number }),
          idToken: fc.record({
            idToken: idTag,
            type: fc.oneof(fc.constantFrom('Central', 'ISO14443'), hostileValue),
          }),
          meterValue,
        },
        { requiredKeys: ['eventType', 'timestamp', 'triggerReason', 'seqNo', 'transactionInfo'] },
      ),
    ),
    fc.tuple(fc.constant('MeterValues'), fc.record({ evseId: number, meterValue })),
    fc.tuple(
      fc.constant('StatusNotification'),
      fc.record({
        timestamp,
        connectorStatus: fc.oneof(fc.constantFrom('Available', 'Occupied'), hostileValue),
        evseId: number,
        connectorId: number,
      }),
    ),
    fc.tuple(
      fc.constant('Authorize'),
      fc.record({ idToken: fc.record({ idToken: idTag, type: fc.constant('Central') }) }),
    ),
    fc.tuple(
      fc.constant('NotifyEVChargingNeeds'),
      fc.record({
        evseId: number,
        chargingNeeds: fc.record({
          requestedEnergyTransfer: fc.oneof(fc.constant('DC'), hostileValue),
          dcChargingParameters: fc.record({
            evMaxCurrent: number,
            evMaxVoltage: number,
            stateOfCharge: number,
            evEnergyCapacity: number,
          }),
        }),
      }),
    ),
  );
}

/** Frames: real-looking calls, wrong message types, answers to nothing, broken JSON. */
function frames(version: '1.6' | '2.0.1'): fc.Arbitrary<string> {
  const id = fc
    .oneof(fc.string({ minLength: 1, maxLength: 36 }), hostileString)
    .map((s) => `f${s}`);
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .tuple(id, calls(version))
        .map(([msgId, [action, payload]]) => JSON.stringify([2, msgId, action, payload])),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.oneof(fc.integer({ min: -1, max: 9 }), hostileValue), id, hostileValue)
        .map((a) => JSON.stringify(a)),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.constantFrom(3, 4), id).map(([k, i]) => JSON.stringify([k, i, {}])),
    },
    { weight: 1, arbitrary: hostileString },
    { weight: 1, arbitrary: hostileValue.map((v) => JSON.stringify(v) ?? '') },
    {
      weight: 1,
      arbitrary: fc
        .tuple(id, calls(version))
        .map(([msgId, [action, payload]]) =>
          JSON.stringify([2, msgId, action, payload]).slice(0, -3),
        ),
    },
  );
}

describe.each([
  ['1.6', 'ocpp1.6'],
  ['2.0.1', 'ocpp2.0.1'],
] as const)('OCPP %s fuzzing', (version, subprotocol) => {
  it('hostile frames from another charger get only CALLRESULT/CALLERROR, leak nothing and move no money', async () => {
    const before = moneySnapshot();
    const socket = await FuzzSocket.open('CP-OFF', subprotocol);
    let n = 0;
    const codes = new Map<string, number>();
    try {
      await fc.assert(
        fc.asyncProperty(frames(version), async (frame) => {
          const answers = await socket.exchange(frame, n++);
          for (const text of answers) {
            const message = JSON.parse(text) as unknown[];
            expect(Array.isArray(message)).toBe(true);
            // the gateway's own calls after a boot (unanswered here) are fine
            if (message[0] === 2) continue;
            if (message[0] === 3) continue;
            expect(message[0]).toBe(4);
            const [, , code, description] = message as [number, string, string, string];
            codes.set(code, (codes.get(code) ?? 0) + 1);
            expect(RPC_ERRORS.has(code), `CALLERROR ${code}: ${description}`).toBe(true);
            expect(description).not.toMatch(INTERNALS);
          }
          expect(socket.closed).toBeUndefined();
        }),
        { numRuns: 1500 },
      );
    } finally {
      socket.close();
    }
    expect(moneySnapshot()).toEqual(before);
    expect((await fetch(`${t.gw.url}/healthz`)).status).toBe(200);
    // the fuzzer got past the schemas and into the handlers, too
    expect(codes.size).toBeGreaterThan(2);
  });
});

describe('found by the fuzzer', () => {
  it('a schema-valid integer beyond 2^53 gets PropertyConstraintViolation, not an SQLite message', async () => {
    const socket = await FuzzSocket.open('CP-OFF', 'ocpp1.6');
    try {
      const frame = JSON.stringify([
        2,
        'huge',
        'StartTransaction',
        { connectorId: 1e308, idTag: 'X', meterStart: 0, timestamp: new Date().toISOString() },
      ]);
      const answers = (await socket.exchange(frame, -1)).map((m) => JSON.parse(m) as unknown[]);
      expect(answers).toContainEqual([
        4,
        'huge',
        'PropertyConstraintViolation',
        'a number is out of range',
        {},
      ]);
    } finally {
      socket.close();
    }
  });
});
