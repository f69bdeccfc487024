import { Buffer } from 'node:buffer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket, type ClientOptions } from 'ws';
import {
  API_KEY,
  CHARGER_PASSWORD,
  DRIVERS,
  startTestGateway,
  type TestGateway,
} from './helpers/gateway.js';
import { mintToken, startSession } from './helpers/http.js';
import { rawCharger, type RawClient } from './helpers/raw-charger.js';
import { IONIQ, PROTOCOLS } from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';
import { gatewayHealth } from './helpers/operator.js';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway({
    ocpp: {
      meterSampleIntervalSeconds: 10,
      callTimeoutSeconds: 2,
      authFailureDelay: { initialMilliseconds: 5, maxMilliseconds: 40 },
      maxFrameBytes: 2048,
      pingIntervalSeconds: 1,
      messageRate: { perSecond: 5, burst: 30 },
    },
  });
});
afterAll(async () => {
  await t.close();
});

function closeOf(client: RawClient): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) =>
    client.once('close', (event: { code: number; reason: string }) => resolve(event)),
  );
}

/** A bare WebSocket to the gateway, ws options as given (autoPong: false answers no ping). */
async function rawSocket(identity: string, options: ClientOptions = {}): Promise<WebSocket> {
  const auth = Buffer.from(`${identity}:${CHARGER_PASSWORD}`).toString('base64');
  const ws = new WebSocket(`${t.gw.ocppUrl}/${identity}`, ['ocpp1.6'], {
    headers: { authorization: `Basic ${auth}` },
    ...options,
  });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return ws;
}

const online = async (): Promise<number> =>
  (await gatewayHealth<{ chargersOnline: number }>(t.gw.operatorUrl, t.gw.db)).chargersOnline;

describe('connection hygiene', () => {
  it('closes a connection that sends a frame above ocpp.maxFrameBytes (1009)', async () => {
    const cp = await rawCharger(t.gw.ocppUrl, 'CP-AC', CHARGER_PASSWORD);
    const closed = closeOf(cp);
    cp.sendRaw(
      JSON.stringify([2, 'big-1', 'DataTransfer', { vendorId: 'x', data: 'y'.repeat(4096) }]),
    );
    expect((await closed).code).toBe(1009);
    await waitUntil(async () => (await online()) === 0, 5000, 'charger offline');
  });

  let rateClosures = 0;
  it('closes a connection that exceeds the message rate (1008), and logs it', async () => {
    const cp = await rawCharger(t.gw.ocppUrl, 'CP-AC', CHARGER_PASSWORD);
    const closed = closeOf(cp);
    const answered: unknown[] = [];
    // A burst of 30 is allowed at once; the flood beyond it is not.
    await Promise.allSettled(
      Array.from({ length: 80 }, () => cp.call('Heartbeat', {}).then((r) => answered.push(r))),
    );
    const event = await closed;
    expect(event.code).toBe(1008);
    expect(answered.length).toBeGreaterThanOrEqual(30);
    expect(answered.length).toBeLessThan(80);
    expect(t.logLines.some((l) => l.includes('exceeded the message rate'))).toBe(true);
    rateClosures = t.logLines.filter((l) => l.includes('exceeded the message rate')).length;
  });

  it('a charger replaying a long offline queue one message at a time is not disconnected', async () => {
    const cp = await rawCharger(t.gw.ocppUrl, 'CP-AC', CHARGER_PASSWORD);
    let closedCode: number | null = null;
    cp.on('close', ({ code }: { code: number }) => (closedCode = code));
    try {
      // Three times the burst, each sent once the one before is answered, as a queue is replayed.
      const start = Date.now() - 3_600_000;
      for (let k = 0; k < 90; k++) {
        await cp.call('MeterValues', {
          connectorId: 1,
          meterValue: [
            {
              timestamp: new Date(start + k * 15_000).toISOString(),
              sampledValue: [
                { value: String(1000 + k), measurand: 'Energy.Active.Import.Register' },
              ],
            },
          ],
        });
      }
      expect(closedCode).toBeNull();
      expect(t.logLines.filter((l) => l.includes('exceeded the message rate')).length).toBe(
        rateClosures,
      );
    } finally {
      await cp.close({ force: true });
    }
  });

  it('drops a dead connection that stops answering pings', async () => {
    const ws = await rawSocket('CP-AC');
    await waitUntil(async () => (await online()) === 1, 5000, 'charger online');
    // The peer goes silent, as a charger whose link died does: no reads, so no pongs.
    (ws as unknown as { _socket: { pause(): void } })._socket.pause();
    await waitUntil(async () => (await online()) === 0, 10_000, 'dead connection dropped');
    ws.terminate();
  });

  it('a charger that never answers pings stays connected while it sends; once silent it is dropped', async () => {
    // Pings every second of silence (ocpp.pingIntervalSeconds: 1). The sender answers none: it
    // sends a Heartbeat instead, for the first three, then nothing. The quiet one sends nothing
    // and answers pings.
    const sender = await rawSocket('CP-AC', { autoPong: false });
    const quiet = await rawSocket('CP-1');
    const closed = new Set<WebSocket>();
    for (const ws of [sender, quiet]) ws.once('close', () => closed.add(ws));
    let pings = 0;
    sender.on('ping', () => {
      pings++;
      if (pings <= 3) sender.send(JSON.stringify([2, `hb-${pings}`, 'Heartbeat', {}]));
    });
    try {
      await waitUntil(() => closed.has(sender), 10_000, 'silent sender dropped');
      // Alive through three intervals after an unanswered ping; dropped after the fourth.
      expect(pings).toBe(4);
      expect(closed.has(quiet)).toBe(false);
    } finally {
      sender.terminate();
      quiet.terminate();
    }
  });
});

interface SessionSnapshot {
  session: unknown;
  ledger: unknown;
  wallets: unknown;
}

describe.each(PROTOCOLS)('a charger cannot act for another charger: $name', (protocol) => {
  it("another charger's stop and meter values for our transaction change nothing", async () => {
    // Each protocol's session stays open on its own connector of CP-1.
    const c = PROTOCOLS.indexOf(protocol) + 1;
    const victim = await protocol.connect(t.gw.ocppUrl, 'CP-1', { timeFactor: 10 });
    let attacker: RawClient | undefined;
    try {
      await victim.plugIn(c, IONIQ);
      await waitUntil(
        () =>
          t.gw.db
            .prepare(
              "SELECT 1 FROM connector_state WHERE charger_id = 'CP-1' AND connector_id = ? AND soc_percent IS NOT NULL",
            )
            .get(String(c)),
        5000,
        'SoC',
      );
      const token = await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);
      const started = victim.waitFor('transactionStarted', (e) => e.connectorId === c);
      const res = await startSession(
        t.gw.url,
        token,
        { chargerId: 'CP-1', connectorId: String(c), driverEmail: DRIVERS.ada.email },
        20_000,
      );
      expect(res.status).toBe(200);
      const { sessionId } = res.body as { sessionId: string };
      const tx = await started;
      await waitUntil(
        () =>
          t.gw.db
            .prepare("SELECT 1 FROM sessions WHERE id = ? AND state = 'charging'")
            .get(sessionId),
        5000,
        'charging',
      );
      const snapshot = (): SessionSnapshot => ({
        session: t.gw.db
          .prepare(
            'SELECT state, cost, credited, delivered_wh, end_reason FROM sessions WHERE id = ?',
          )
          .get(sessionId),
        ledger: t.gw.db.prepare('SELECT seq, kind, amount FROM ledger_entries ORDER BY seq').all(),
        wallets: t.gw.db.prepare('SELECT driver_id, balance FROM wallets ORDER BY driver_id').all(),
      });
      const before = snapshot();

      const now = new Date().toISOString();
      if (protocol.name === 'OCPP 1.6J') {
        attacker = await rawCharger(t.gw.ocppUrl, 'CP-AC', CHARGER_PASSWORD, ['ocpp1.6']);
        await attacker.call('MeterValues', {
          connectorId: c,
          transactionId: tx.transactionId,
          meterValue: [
            {
              timestamp: now,
              sampledValue: [{ value: '99999999', measurand: 'Energy.Active.Import.Register' }],
            },
          ],
        });
        await attacker.call('StopTransaction', {
          transactionId: tx.transactionId,
          meterStop: 99_999_999,
          timestamp: now,
          reason: 'Local',
        });
      } else {
        attacker = await rawCharger(t.gw.ocppUrl, 'CP-AC', CHARGER_PASSWORD, ['ocpp2.0.1']);
        for (const [seqNo, eventType] of [
          [50, 'Updated'],
          [51, 'Ended'],
        ] as const) {
          await attacker.call('TransactionEvent', {
            eventType,
            timestamp: now,
            triggerReason: eventType === 'Ended' ? 'StopAuthorized' : 'MeterValuePeriodic',
            seqNo,
            transactionInfo: {
              transactionId: String(tx.transactionId),
              ...(eventType === 'Ended' ? { stoppedReason: 'Local' } : {}),
            },
            evse: { id: c, connectorId: 1 },
            meterValue: [
              {
                timestamp: now,
                sampledValue: [{ value: 99_999_999, measurand: 'Energy.Active.Import.Register' }],
              },
            ],
          });
        }
      }
      // The victim's own next sample proves the gateway has processed everything sent before it.
      await victim.waitFor('meterValues', (m) => m.transactionId === tx.transactionId);
      expect(snapshot()).toEqual(before);
      expect(before.session).toMatchObject({ state: 'charging', cost: null });
    } finally {
      await attacker?.close();
      await victim.disconnect();
    }
  });
});
