import { afterEach, describe, expect, it } from 'vitest';
import type { RawClient } from './helpers/raw-charger.js';
import { configurationAnswer } from './helpers/raw-charger.js';
import { API_KEY, DRIVERS } from './helpers/gateway.js';
import { mintToken, startSession } from './helpers/http.js';
import { raw16, raw201, type RawProtocol, type RawStation } from './helpers/raw-stations.js';
import { AMOUNT, harness } from './helpers/session-harness.js';
import { waitUntil } from './helpers/wait.js';

/**
 * The charger's screen: what a paid session's driver is told, on real frames of both protocols.
 * The paid session of the harness: 1,000 NGN at 412.5 NGN/kWh (2,424 Wh) from Ada's 50,000 NGN,
 * the register starting at 10,000 Wh.
 */

const PAID = (wallet: string) => `Paid NGN 1,000 for up to 2.4 kWh. Wallet: NGN ${wallet}.`;
const RUNNING_600 = 'Used NGN 247 of NGN 1,000 (0.6 kWh). NGN 753 left.';
const RUNNING_1000 = 'Used NGN 412 of NGN 1,000 (1.0 kWh). NGN 588 left.';
const FINAL = (wallet: string) =>
  `Total NGN 495 for 1.2 kWh. NGN 505 back to your wallet: NGN ${wallet}.`;
const RUNNING_EVERY_S = 5;

interface Received {
  action: string;
  params: Record<string, unknown>;
}

/** Records the screen calls a station receives and answers each with `answer`. */
function recordScreen(
  cp: RawClient,
  actions: string[],
  answer: (r: Received) => Record<string, unknown> = () => ({ status: 'Accepted' }),
): Received[] {
  const got: Received[] = [];
  for (const action of actions) {
    cp.handle(action, async ({ params }) => {
      const r = { action, params: params as Record<string, unknown> };
      got.push(r);
      return answer(r);
    });
  }
  return got;
}

/** A 1.6 charger's configuration keys, with or without the cost-and-price flag. */
function advertise16(cp: RawClient, costAndPrice: string | null): void {
  const held = new Map<string, string>([['MeterValueSampleInterval', '10']]);
  if (costAndPrice !== null) held.set('CustomDisplayCostAndPrice', costAndPrice);
  cp.handle('GetConfiguration', async ({ params }) => configurationAnswer(held, params));
}

/** A 2.0.1 station's device model: these variables (`Component.Variable[instance]`) only. */
function advertise201(cp: RawClient, variables: Record<string, string>): void {
  cp.handle('GetVariables', async ({ params }) => {
    const { getVariableData } = params as {
      getVariableData: {
        component: { name: string };
        variable: { name: string; instance?: string };
      }[];
    };
    return {
      getVariableResult: getVariableData.map((d) => {
        const key = `${d.component.name}.${d.variable.name}${d.variable.instance ? `[${d.variable.instance}]` : ''}`;
        const value = variables[key];
        return {
          component: d.component,
          variable: d.variable,
          ...(value === undefined
            ? { attributeStatus: 'UnknownVariable' }
            : { attributeStatus: 'Accepted', attributeValue: value }),
        };
      }),
    };
  });
}

/** Ada's wallet now, as the screen writes it. */
function walletOf(h: ReturnType<typeof harness>): string {
  const row = h.t.gw.db
    .prepare("SELECT balance FROM wallets WHERE driver_id = 'drv-ada'")
    .get() as { balance: number };
  return row.balance.toLocaleString('en-US');
}

/**
 * The harness's paid session, with the station's own handlers given before it boots: the gateway
 * reads what a charger shows before its remote start.
 */
function screenSessions(h: ReturnType<typeof harness>) {
  const stations: RawStation[] = [];
  afterEach(async () => {
    await Promise.all(stations.splice(0).map((s) => s.close()));
  });
  return async (protocol: RawProtocol, setup: (cp: RawClient) => void) => {
    const station = await protocol.connect(h.t.gw.ocppUrl, 'CP-1');
    stations.push(station);
    setup(station.cp);
    await station.boot();
    const token = await mintToken(h.t.gw.url, API_KEY, DRIVERS.ada.email);
    const res = await startSession(
      h.t.gw.url,
      token,
      { chargerId: 'CP-1', connectorId: '1', driverEmail: DRIVERS.ada.email },
      AMOUNT,
    );
    expect(res.status).toBe(200);
    return { station, sessionId: (res.body as { sessionId: string }).sessionId };
  };
}

const costData = (r: Received) => ({
  messageId: r.params.messageId,
  vendorId: r.params.vendorId,
  data: JSON.parse(r.params.data as string) as Record<string, unknown>,
});

describe('the charger screen: OCPP 1.6J cost-and-price DataTransfer', () => {
  const h = harness({}, { screens: { runningCostSeconds: RUNNING_EVERY_S } });
  const paidSession = screenSessions(h);

  async function advertised(
    costAndPrice: string | null,
    answer?: (r: Received) => Record<string, unknown>,
  ): Promise<{ station: RawStation; got: Received[]; sessionId: string }> {
    let got: Received[] = [];
    const { station, sessionId } = await paidSession(raw16, (cp) => {
      advertise16(cp, costAndPrice);
      got = recordScreen(cp, ['DataTransfer'], answer);
    });
    return { station, got, sessionId };
  }

  it('SetUserPrice after Authorize (once: not again at the start), RunningCost on the samples at most every few seconds, FinalCost with the settled cost', async () => {
    const { station, got, sessionId } = await advertised('True');
    expect(h.t.gw.chargers.showsNothing('CP-1')).toBe(false);
    const paid = PAID(walletOf(h));
    const remote = station.remoteStarts.at(-1);
    expect(await station.send({ action: 'Authorize', params: { idTag: remote?.idToken } })).toEqual(
      {
        idTagInfo: { status: 'Accepted' },
      },
    );
    await waitUntil(() => got.length === 1 || undefined, 3000, 'SetUserPrice');
    expect(costData(got[0] as Received)).toEqual({
      vendorId: 'org.openchargealliance.costmsg',
      messageId: 'SetUserPrice',
      data: { idToken: remote?.idToken, priceText: paid },
    });

    const { tx } = await station.start(10_000);
    await station.send(station.sample(tx, 10_600));
    await waitUntil(() => got.length === 2 || undefined, 3000, 'RunningCost');
    // Within the interval: no second RunningCost.
    await station.send(station.sample(tx, 10_800));
    h.t.clock.advance((RUNNING_EVERY_S + 1) * 1000);
    await station.send(station.sample(tx, 11_000));
    await waitUntil(() => got.length === 3 || undefined, 3000, 'second RunningCost');
    await station.send(station.end(tx, 11_200));
    await h.settled(sessionId);
    await waitUntil(() => got.length === 4 || undefined, 3000, 'FinalCost');

    const [, first, second, final] = got.map(costData);
    expect(first).toMatchObject({
      messageId: 'RunningCost',
      data: {
        transactionId: Number(tx.ref),
        meterValue: 10_600,
        cost: 247,
        state: 'Charging',
        chargingPrice: { kWhPrice: 412.5 },
      },
    });
    expect(typeof first?.data.timestamp).toBe('string');
    expect(second).toMatchObject({
      messageId: 'RunningCost',
      data: { meterValue: 11_000, cost: 412 },
    });
    expect(final).toEqual({
      vendorId: 'org.openchargealliance.costmsg',
      messageId: 'FinalCost',
      data: { transactionId: Number(tx.ref), cost: 495, priceText: FINAL(walletOf(h)) },
    });
    h.settledOnce(sessionId, 1_200);
  });

  it('a charger that does not advertise the messages (key absent or false) is sent none', async () => {
    for (const flag of [null, 'false']) {
      const { station, got, sessionId } = await advertised(flag);
      const { tx } = await station.start(10_000);
      await station.send(station.sample(tx, 10_600));
      await station.send(station.end(tx, 11_200));
      await h.settled(sessionId);
      await new Promise((r) => setTimeout(r, 200));
      expect(got).toEqual([]);
      // Known to show nothing: the screen's reads (session, balance) are skipped on every event.
      expect(h.t.gw.chargers.showsNothing('CP-1')).toBe(true);
      await station.close();
    }
  });

  it('a message the charger refuses is not sent again until it boots; the others still go', async () => {
    const { station, got, sessionId } = await advertised('true', (r) => ({
      status: r.params.messageId === 'RunningCost' ? 'UnknownMessageId' : 'Accepted',
    }));
    const paid = PAID(walletOf(h));
    const { tx } = await station.start(10_000);
    await waitUntil(() => got.length === 1 || undefined, 3000, 'SetUserPrice at the start');
    await station.send(station.sample(tx, 10_600));
    await waitUntil(() => got.length === 2 || undefined, 3000, 'RunningCost');
    await new Promise((r) => setTimeout(r, 100));
    for (const wh of [10_800, 11_000]) {
      h.t.clock.advance((RUNNING_EVERY_S + 1) * 1000);
      await station.send(station.sample(tx, wh));
    }
    await station.send(station.end(tx, 11_200));
    await h.settled(sessionId);
    await waitUntil(
      () => got.some((r) => r.params.messageId === 'FinalCost') || undefined,
      3000,
      'FinalCost',
    );
    expect(got.map((r) => r.params.messageId)).toEqual([
      'SetUserPrice',
      'RunningCost',
      'FinalCost',
    ]);
    expect(costData(got[0] as Received).data).toEqual({ idToken: tx.idToken, priceText: paid });
  });
});

describe('the charger screen: OCPP 2.0.1 personal messages, total cost, display messages', () => {
  const h = harness({}, { screens: { runningCostSeconds: RUNNING_EVERY_S } });
  const paidSession = screenSessions(h);
  const ALL = {
    'TariffCostCtrlr.Enabled[Tariff]': 'true',
    'TariffCostCtrlr.Enabled[Cost]': 'true',
    'TariffCostCtrlr.Currency': 'NGN',
    'DisplayMessageCtrlr.Enabled': 'true',
  };
  const content = (text: string) => ({ format: 'ASCII', language: 'en', content: text });

  async function advertised(
    variables: Record<string, string>,
    answer?: (r: Received) => Record<string, unknown>,
  ) {
    let got: Received[] = [];
    const { station, sessionId } = await paidSession(raw201, (cp) => {
      advertise201(cp, variables);
      got = recordScreen(cp, ['SetDisplayMessage', 'CostUpdated'], answer);
    });
    return { station, got, sessionId };
  }

  it('the paid amount in the Authorize and Started answers, the running and final cost on the answers, a display message for the transaction', async () => {
    const { station, got, sessionId } = await advertised(ALL);
    const paid = PAID(walletOf(h));
    const remote = station.remoteStarts.at(-1);
    // What the station shows was read before the remote start: the Authorize answer says it.
    const authorize = { idToken: { idToken: remote?.idToken, type: 'Central' } };
    expect(await station.send({ action: 'Authorize', params: authorize })).toEqual({
      idTokenInfo: { status: 'Accepted', personalMessage: content(paid) },
    });

    const { tx, reply } = await station.start(10_000);
    expect(reply).toEqual({ idTokenInfo: { status: 'Accepted', personalMessage: content(paid) } });
    await waitUntil(() => got.length === 1 || undefined, 3000, 'SetDisplayMessage');
    expect(got[0]?.params).toEqual({
      message: {
        id: expect.any(Number) as number,
        priority: 'InFront',
        transactionId: tx.ref,
        message: content(paid),
      },
    });

    expect(await station.send(station.sample(tx, 10_600))).toEqual({
      totalCost: 247,
      updatedPersonalMessage: content(RUNNING_600),
    });
    // Within the interval: nothing on the answer.
    expect(await station.send(station.sample(tx, 10_800))).toEqual({});
    h.t.clock.advance((RUNNING_EVERY_S + 1) * 1000);
    // A running cost heard outside a TransactionEvent goes as CostUpdated.
    await station.send({
      action: 'MeterValues',
      params: {
        evseId: tx.connector,
        meterValue: [
          {
            timestamp: new Date().toISOString(),
            sampledValue: [
              {
                value: 11_000,
                measurand: 'Energy.Active.Import.Register',
                unitOfMeasure: { unit: 'Wh' },
              },
            ],
          },
        ],
      },
    });
    await waitUntil(
      () => got.some((r) => r.action === 'CostUpdated') || undefined,
      3000,
      'CostUpdated',
    );
    expect(got.find((r) => r.action === 'CostUpdated')?.params).toEqual({
      totalCost: 412,
      transactionId: tx.ref,
    });
    // The display message is replaced (the same id) with the running cost.
    await waitUntil(
      () => got.filter((r) => r.action === 'SetDisplayMessage').length === 3 || undefined,
      3000,
      'display updates',
    );
    const displays = got.filter((r) => r.action === 'SetDisplayMessage');
    const ids = new Set(displays.map((r) => (r.params.message as { id: number }).id));
    expect(ids.size).toBe(1);
    expect((displays[2]?.params.message as { message: unknown }).message).toEqual(
      content(RUNNING_1000),
    );

    const ended = await station.send(station.end(tx, 11_200));
    expect(ended).toEqual({ totalCost: 495, updatedPersonalMessage: content(FINAL(walletOf(h))) });
    h.settledOnce(sessionId, 1_200);
  });

  it('only what the station advertises: cost without tariff messages, and nothing with a currency other than NGN', async () => {
    const { station, got, sessionId } = await advertised({
      'TariffCostCtrlr.Enabled[Cost]': 'true',
    });
    await station.send({
      action: 'Authorize',
      params: { idToken: { idToken: 'X', type: 'Central' } },
    });
    const { tx, reply } = await station.start(10_000);
    await new Promise((r) => setTimeout(r, 100));
    expect(reply).toEqual({ idTokenInfo: { status: 'Accepted' } });
    expect(await station.send(station.sample(tx, 10_600))).toEqual({ totalCost: 247 });
    expect(await station.send(station.end(tx, 11_200))).toEqual({ totalCost: 495 });
    await h.settled(sessionId);
    expect(got).toEqual([]);
    await station.close();

    const other = await advertised({
      'TariffCostCtrlr.Enabled[Cost]': 'true',
      'TariffCostCtrlr.Currency': 'EUR',
      'DisplayMessageCtrlr.Enabled': 'false',
      'DisplayMessageCtrlr.Available': 'true',
    });
    const started = await other.station.start(10_000);
    await new Promise((r) => setTimeout(r, 100));
    expect(await other.station.send(other.station.sample(started.tx, 10_600))).toEqual({});
    expect(await other.station.send(other.station.end(started.tx, 11_200))).toEqual({});
    expect(other.got).toEqual([]);
    expect(h.t.gw.chargers.showsNothing('CP-1')).toBe(true);
  });

  it('a station that refuses the display message is not asked again until it boots', async () => {
    const { station, got, sessionId } = await advertised(
      { 'DisplayMessageCtrlr.Available': 'true' },
      () => ({ status: 'NotSupportedMessageFormat' }),
    );
    const { tx } = await station.start(10_000);
    await waitUntil(() => got.length === 1 || undefined, 3000, 'SetDisplayMessage');
    await new Promise((r) => setTimeout(r, 100));
    for (const wh of [10_600, 10_800, 11_000]) {
      h.t.clock.advance((RUNNING_EVERY_S + 1) * 1000);
      expect(await station.send(station.sample(tx, wh))).toEqual({});
    }
    await station.send(station.end(tx, 11_200));
    await h.settled(sessionId);
    await new Promise((r) => setTimeout(r, 100));
    expect(got).toHaveLength(1);
    // A boot forgets it: the next session's start asks again.
    let again: Received[] = [];
    const next = await paidSession(raw201, (cp) => {
      advertise201(cp, { 'DisplayMessageCtrlr.Available': 'true' });
      again = recordScreen(cp, ['SetDisplayMessage']);
    });
    await next.station.start(20_000);
    await waitUntil(() => again.length === 1 || undefined, 3000, 'asked again after the boot');
  });
});
