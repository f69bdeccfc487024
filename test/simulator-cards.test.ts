import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChargePoint16 } from '../simulators/ocpp16/charge-point.js';
import type {
  AuthorizationStatus as Status16,
  IncomingCalls as In16,
  OutgoingCalls as Out16,
} from '../simulators/ocpp16/ocpp-types.js';
import { ChargePoint201 } from '../simulators/ocpp201/charge-point.js';
import type {
  IncomingCalls as In201,
  OutgoingCalls as Out201,
} from '../simulators/ocpp201/ocpp-messages.js';
import type { AuthorizationStatus as Status201 } from '../simulators/ocpp201/ocpp-types.js';
import { validateConfig } from '../simulators/shared/cli-options.js';
import { Personality } from '../simulators/shared/personalities.js';
import {
  SimulatorRunner,
  type ChargePointFactory,
  type EventLine,
} from '../simulators/shared/simulator-runner.js';
import type {
  ChargePointOptions,
  VehicleSpec,
} from '../simulators/shared/simulated-charge-point.js';
import { WireQuirks } from '../simulators/shared/wire-quirks.js';
import { RecordingCentralSystem, type Answer } from './helpers/recording-central-system.js';
import { waitUntil } from './helpers/wait.js';

/**
 * Cards tapped at the simulators' readers and vehicles identified at plug-in (AutoCharge), against
 * a recording central system: what each protocol's charger sends, in which order, and what it does
 * with each answer.
 */

const PASSWORD = 'sim-secret-cards';
const TIME_FACTOR = 600;
const CARD = '04A23B1C';
const MAC = '00:23:A7:F1:C2:D4';
const EV: VehicleSpec = {
  model: 'Hyundai Ioniq 5',
  batteryKwh: 77.4,
  socPercent: 35,
  maxPowerW: 150_000,
};
const AUTOCHARGE_EV: VehicleSpec = { ...EV, macAddress: MAC };

class CentralSystem16 extends RecordingCentralSystem<Out16, In16> {
  authorizeStatus: Status16 = 'Accepted';
  startStatus: Status16 = 'Accepted';
  private nextTransactionId = 500;

  protected answers(answer: Answer<Out16>): void {
    answer('BootNotification', () => this.bootConf());
    answer('Heartbeat', () => ({ currentTime: new Date().toISOString() }));
    answer('StatusNotification', () => ({}));
    answer('MeterValues', () => ({}));
    answer('Authorize', () => ({ idTagInfo: { status: this.authorizeStatus } }));
    answer('StartTransaction', () => ({
      transactionId: this.nextTransactionId++,
      idTagInfo: { status: this.startStatus },
    }));
    answer('StopTransaction', () => ({}));
  }

  /** The calls that carry a token, in the order the charger sent them. */
  tokenCalls(): string[] {
    return this.received
      .filter((m) => ['Authorize', 'StartTransaction', 'StopTransaction'].includes(m.method))
      .map((m) => `${m.method} ${String((m.params as { idTag?: string }).idTag)}`);
  }
}

class CentralSystem201 extends RecordingCentralSystem<Out201, In201> {
  authorizeStatus: Status201 = 'Accepted';
  idTokenStatus: Status201 = 'Accepted';

  protected answers(answer: Answer<Out201>): void {
    answer('BootNotification', () => this.bootConf());
    answer('Heartbeat', () => ({ currentTime: new Date().toISOString() }));
    answer('StatusNotification', () => ({}));
    answer('MeterValues', () => ({}));
    answer('NotifyEvent', () => ({}));
    answer('NotifyEVChargingNeeds', () => ({ status: 'Accepted' }));
    answer('Authorize', () => ({ idTokenInfo: { status: this.authorizeStatus } }));
    answer('TransactionEvent', (params) =>
      params.idToken ? { idTokenInfo: { status: this.idTokenStatus } } : {},
    );
  }

  /** Authorize and TransactionEvents but samples: `Authorize <token> <type>`, `<eventType> <trigger> <token>`. */
  tokenCalls(): string[] {
    return this.received.flatMap((m) => {
      if (m.method === 'Authorize') {
        const { idToken } = m.params as Out201['Authorize']['req'];
        return [`Authorize ${idToken.idToken} ${idToken.type}`];
      }
      if (m.method !== 'TransactionEvent') return [];
      const e = m.params as Out201['TransactionEvent']['req'];
      // Periodic samples come as the simulated clock runs: not what these tests look at.
      if (e.triggerReason === 'MeterValuePeriodic') return [];
      const reason = e.transactionInfo.stoppedReason ? ` ${e.transactionInfo.stoppedReason}` : '';
      return [`${e.eventType} ${e.triggerReason} ${e.idToken?.idToken ?? '-'}${reason}`];
    });
  }

  async startPoint(identity: string, value: string): Promise<void> {
    const conf = await this.call(identity, 'SetVariables', {
      setVariableData: [
        {
          component: { name: 'TxCtrlr' },
          variable: { name: 'TxStartPoint' },
          attributeValue: value,
        },
      ],
    });
    expect(conf.setVariableResult[0]?.attributeStatus).toBe('Accepted');
  }
}

const open: { disconnect(): Promise<void> }[] = [];
afterEach(async () => {
  for (const cp of open.splice(0)) await cp.disconnect();
});

/** A charger of either protocol on `url`, connected, disconnected after the test. */
async function connected<C extends { connect(): Promise<void>; disconnect(): Promise<void> }>(
  make: (options: ChargePointOptions) => C,
  url: string,
  personality: string[],
  extra: Partial<ChargePointOptions> = {},
): Promise<C> {
  const cp = make({
    url,
    identity: 'CP-CARD',
    password: PASSWORD,
    connectors: 2,
    timeFactor: TIME_FACTOR,
    personality,
    ...extra,
  });
  open.push(cp);
  await cp.connect();
  return cp;
}

/**
 * The simulator's CLI runner for one charger whose connector 1 has `plug` (a --plug spec), its
 * event lines collected; resolves once a transaction started, stopped after the test.
 */
async function cliRun(
  make: ChargePointFactory,
  url: string,
  id: string,
  plug: string,
): Promise<EventLine[]> {
  const lines: EventLine[] = [];
  const config = validateConfig(
    { url, id, password: PASSWORD, timeFactor: TIME_FACTOR, plug: [plug] },
    undefined,
  );
  const runner = new SimulatorRunner(
    config,
    { event: (line) => lines.push(line), problem: () => undefined },
    make,
  );
  open.push({ disconnect: () => runner.stop() });
  await runner.start();
  await waitUntil(() => lines.find((l) => l.event === 'transactionStarted'), 5000, 'started');
  return lines;
}

async function closeChecked(cs: { close(): Promise<void>; validationFailures: unknown[] }) {
  await cs.close();
  expect(cs.validationFailures).toEqual([]);
}

describe('OCPP 1.6 cards and vehicles', () => {
  let cs: CentralSystem16;
  beforeEach(async () => {
    cs = await new CentralSystem16('ocpp1.6', PASSWORD).listen();
  });
  afterEach(() => closeChecked(cs));

  const charger = (personality: string[] = [], extra: Partial<ChargePointOptions> = {}) =>
    connected((options) => new ChargePoint16(options), cs.url, personality, extra);

  it('a card tapped before plugging in is authorized, starts at plug-in, and ends when tapped again', async () => {
    const cp = await charger();
    expect(await cp.tap(1, CARD)).toEqual({
      connectorId: 1,
      idTag: CARD,
      source: 'card',
      status: 'Accepted',
      outcome: 'waiting',
    });
    expect(cp.state(1)).toMatchObject({ status: 'Preparing', idTag: CARD });
    const started = cp.waitFor('transactionStarted', (e) => e.connectorId === 1);
    await cp.plugIn(1, EV);
    expect(await started).toMatchObject({ idTag: CARD });
    // Another card does not stop someone else's charge; the same card (in any case) does.
    expect(await cp.tap(1, '04FFFFFF')).toMatchObject({ outcome: 'ignored' });
    const stopped = cp.waitFor('transactionStopped', (e) => e.connectorId === 1);
    expect(await cp.tap(1, CARD.toLowerCase())).toMatchObject({ outcome: 'stopped' });
    expect((await stopped).reason).toBe('Local');
    expect(cs.tokenCalls()).toEqual([
      `Authorize ${CARD}`,
      `StartTransaction ${CARD}`,
      `StopTransaction ${CARD}`,
    ]);
    expect(cs.messages('StopTransaction')[0]).toMatchObject({ reason: 'Local' });
  });

  it('a card tapped with the vehicle plugged in starts at once', async () => {
    const cp = await charger();
    await cp.plugIn(2, EV);
    expect(await cp.tap(2, CARD)).toMatchObject({ status: 'Accepted', outcome: 'started' });
    expect(cp.state(2)).toMatchObject({ status: 'Charging', idTag: CARD });
    expect(cs.messages('StartTransaction')).toEqual([expect.objectContaining({ connectorId: 2 })]);
  });

  it.each<Status16>(['Invalid', 'Blocked', 'Expired', 'ConcurrentTx'])(
    'Authorize answered %s: nothing starts',
    async (status) => {
      cs.authorizeStatus = status;
      const cp = await charger();
      await cp.plugIn(1, EV);
      expect(await cp.tap(1, CARD)).toMatchObject({ status, outcome: 'refused' });
      expect(cs.messages('StartTransaction')).toEqual([]);
      expect(cp.state(1)).toMatchObject({ status: 'Preparing', transactionId: undefined });
    },
  );

  it('skips-authorize: StartTransaction alone; answered Invalid, the charger ends it (StopTransactionOnInvalidId)', async () => {
    cs.startStatus = 'Invalid';
    const cp = await charger(['skips-authorize']);
    await cp.plugIn(1, EV);
    const stopped = cp.waitFor('transactionStopped', (e) => e.connectorId === 1);
    expect(await cp.tap(1, CARD)).toEqual({
      connectorId: 1,
      idTag: CARD,
      source: 'card',
      outcome: 'started',
    });
    expect((await stopped).reason).toBe('DeAuthorized');
    expect(cs.tokenCalls()).toEqual([`StartTransaction ${CARD}`, `StopTransaction ${CARD}`]);
  });

  it('skips-authorize with StopTransactionOnInvalidId false: the refused transaction stays, without energy', async () => {
    cs.startStatus = 'Blocked';
    const cp = await charger(['skips-authorize']);
    const changed = await cs.call(cp.identity, 'ChangeConfiguration', {
      key: 'StopTransactionOnInvalidId',
      value: 'false',
    });
    expect(changed.status).toBe('Accepted');
    await cp.plugIn(1, EV);
    await cp.tap(1, CARD);
    expect(cp.state(1)).toMatchObject({ status: 'SuspendedEVSE', powerW: 0 });
    expect(cs.messages('StopTransaction')).toEqual([]);
  });

  it('AutoCharge: a vehicle with a MAC is identified at plug-in as VID:<MAC> and charges', async () => {
    const cp = await charger();
    const tapped = cp.waitFor('tapped');
    await cp.plugIn(1, AUTOCHARGE_EV);
    expect(await tapped).toMatchObject({
      idTag: 'VID:0023A7F1C2D4',
      source: 'vehicle',
      outcome: 'started',
    });
    expect(cs.tokenCalls()).toEqual([
      'Authorize VID:0023A7F1C2D4',
      'StartTransaction VID:0023A7F1C2D4',
    ]);
    expect(cp.state(1).status).toBe('Charging');
  });

  it('the CLI plugs a vehicle and taps the card a --plug spec names (card=)', async () => {
    const lines = await cliRun(
      (options) => new ChargePoint16(options),
      cs.url,
      'CP-CLI',
      '1:model=Renault Zoe,batteryKwh=52,soc=20,card=04a23b1c',
    );
    expect(lines.find((l) => l.event === 'tapped')).toMatchObject({
      cp: 'CP-CLI',
      // The reader reads bytes: the firmware writes them its way (upper case, well-behaved).
      idTag: CARD,
      status: 'Accepted',
      outcome: 'started',
    });
    expect(cs.tokenCalls()).toEqual([`Authorize ${CARD}`, `StartTransaction ${CARD}`]);
    expect(() =>
      validateConfig({ url: cs.url, id: 'X', plug: ['1:mac=00:23'] }, undefined),
    ).toThrow(/plug\[0\]\.mac: must be 6 bytes of hex/);
  });

  it('offline, with nothing held for the card, the tap is refused and nothing starts', async () => {
    const cp = await charger([], { reconnect: false });
    await cp.plugIn(1, EV);
    await cs.drop(cp.identity);
    await waitUntil(() => !cp.isBooted, 5000, 'link lost');
    expect(await cp.tap(1, CARD)).toMatchObject({ outcome: 'refused' });
    expect(cp.state(1).transactionId).toBeUndefined();
    expect(cs.messages('Authorize')).toEqual([]);
  });

  it('AutoCharge refused: the vehicle stays plugged in without a transaction', async () => {
    cs.authorizeStatus = 'Invalid';
    const cp = await charger();
    const tapped = cp.waitFor('tapped');
    await cp.plugIn(1, AUTOCHARGE_EV);
    expect(await tapped).toMatchObject({ status: 'Invalid', outcome: 'refused' });
    expect(cs.messages('StartTransaction')).toEqual([]);
  });
});

describe('OCPP 2.0.1 cards and vehicles', () => {
  let cs: CentralSystem201;
  beforeEach(async () => {
    cs = await new CentralSystem201('ocpp2.0.1', PASSWORD).listen();
  });
  afterEach(() => closeChecked(cs));

  const station = (personality: string[] = [], extra: Partial<ChargePointOptions> = {}) =>
    connected((options) => new ChargePoint201(options), cs.url, personality, extra);

  it('TxStartPoint PowerPathClosed: Authorize first, Started with the idToken at plug-in; the same card ends it', async () => {
    const cp = await station();
    expect(await cp.tap(1, CARD)).toMatchObject({ status: 'Accepted', outcome: 'waiting' });
    const started = cp.waitFor('transactionStarted', (e) => e.connectorId === 1);
    await cp.plugIn(1, EV);
    expect(await started).toMatchObject({ idTag: CARD });
    expect(await cp.tap(1, '04FFFFFF')).toMatchObject({ outcome: 'ignored' });
    const stopped = cp.waitFor('transactionStopped', (e) => e.connectorId === 1);
    expect(await cp.tap(1, CARD)).toMatchObject({ outcome: 'stopped' });
    expect((await stopped).reason).toBe('Local');
    const calls = cs.tokenCalls();
    expect(calls[0]).toBe(`Authorize ${CARD} ISO14443`);
    expect(calls[1]).toBe(`Started CablePluggedIn ${CARD}`);
    expect(calls.at(-1)).toBe('Ended StopAuthorized - Local');
  });

  it('TxStartPoint Authorized: the tap starts the transaction before the vehicle comes', async () => {
    const cp = await station();
    await cs.startPoint(cp.identity, 'Authorized');
    expect(await cp.tap(1, CARD, { type: 'ISO15693' })).toMatchObject({ outcome: 'started' });
    expect(cs.tokenCalls()).toEqual([`Authorize ${CARD} ISO15693`, `Started Authorized ${CARD}`]);
    await cp.plugIn(1, EV);
    await waitUntil(
      () => cp.state(1).status === 'Occupied' && cp.state(1).powerW > 0,
      5000,
      'charging',
    );
  });

  it('TxStartPoint EVConnected: Started at plug-in without a token, the tap authorizes it in an Updated event', async () => {
    const cp = await station();
    await cs.startPoint(cp.identity, 'EVConnected');
    await cp.plugIn(1, EV);
    expect(cp.state(1).powerW).toBe(0);
    const started = cp.waitFor('transactionStarted', (e) => e.connectorId === 1);
    expect(await cp.tap(1, CARD)).toMatchObject({ status: 'Accepted', outcome: 'started' });
    expect(await started).toMatchObject({ idTag: CARD });
    expect(cs.tokenCalls()).toEqual([
      'Started CablePluggedIn -',
      `Authorize ${CARD} ISO14443`,
      `Updated Authorized ${CARD}`,
    ]);
  });

  it.each<Status201>(['Invalid', 'Blocked', 'Expired', 'NoCredit', 'ConcurrentTx', 'Unknown'])(
    'Authorize answered %s: no transaction starts, nor is one started at EVConnected authorized',
    async (status) => {
      cs.authorizeStatus = status;
      const cp = await station();
      await cs.startPoint(cp.identity, 'EVConnected');
      await cp.plugIn(1, EV);
      expect(await cp.tap(1, CARD)).toMatchObject({ status, outcome: 'refused' });
      await cp.plugIn(2, EV);
      await cs.startPoint(cp.identity, 'PowerPathClosed');
      expect(await cp.tap(2, CARD)).toMatchObject({ status, outcome: 'refused' });
      const events = cs.tokenCalls().filter((call) => !call.startsWith('Authorize'));
      expect(events.filter((call) => call.startsWith('Started'))).toHaveLength(2);
      // No event carries the card (meter samples of the unauthorized transaction may come).
      expect(events.filter((call) => call.includes(CARD))).toEqual([]);
      expect(cp.state(1).powerW).toBe(0);
    },
  );

  it('the CLI identifies a vehicle a --plug spec gives a MAC (mac=)', async () => {
    const lines = await cliRun(
      (options) => new ChargePoint201(options),
      cs.url,
      'CS-CLI',
      '1:model=Renault Zoe,mac=0023a7f1c2d4',
    );
    expect(lines.find((l) => l.event === 'tapped')).toMatchObject({
      idTag: '0023A7F1C2D4',
      source: 'vehicle',
    });
  });

  it('offline, with nothing held for the card, the tap is refused and nothing starts', async () => {
    const cp = await station([], { reconnect: false });
    await cp.plugIn(1, EV);
    await cs.drop(cp.identity);
    await waitUntil(() => !cp.isBooted, 5000, 'link lost');
    expect(await cp.tap(1, CARD)).toMatchObject({ outcome: 'refused' });
    expect(cp.state(1).transactionId).toBeUndefined();
    expect(cs.messages('Authorize')).toEqual([]);
  });

  it('skips-authorize: the token goes in Started; answered Invalid, the station ends the transaction', async () => {
    cs.idTokenStatus = 'Invalid';
    const cp = await station(['skips-authorize']);
    await cp.plugIn(1, EV);
    const stopped = cp.waitFor('transactionStopped', (e) => e.connectorId === 1);
    expect(await cp.tap(1, CARD)).toMatchObject({ outcome: 'started' });
    expect((await stopped).reason).toBe('DeAuthorized');
    expect(cs.tokenCalls()).toEqual([
      `Started Authorized ${CARD}`,
      'Ended Deauthorized - DeAuthorized',
    ]);
  });

  it('AutoCharge: the EV is identified by a MacAddress idToken, in either TxStartPoint order', async () => {
    const cp = await station();
    await cp.plugIn(1, AUTOCHARGE_EV);
    await cs.startPoint(cp.identity, 'EVConnected');
    const tapped = cp.waitFor('tapped', (e) => e.connectorId === 2);
    await cp.plugIn(2, AUTOCHARGE_EV);
    expect(await tapped).toMatchObject({ source: 'vehicle', outcome: 'started' });
    expect(cs.tokenCalls()).toEqual([
      'Authorize 0023A7F1C2D4 MacAddress',
      'Started Authorized 0023A7F1C2D4',
      'Started CablePluggedIn -',
      'Authorize 0023A7F1C2D4 MacAddress',
      'Updated Authorized 0023A7F1C2D4',
    ]);
  });
});

describe('token deviations: how a personality writes what its reader read', () => {
  const wire = (protocol: 'ocpp1.6' | 'ocpp2.0.1', ...names: string[]) =>
    new WireQuirks(protocol, Personality.parse(names, protocol), 'FleetSim');

  it('writes hex UIDs in lower case, with separators, zero-padded; leaves other tokens alone', () => {
    expect(wire('ocpp1.6').readerId(CARD)).toBe(CARD);
    expect(wire('ocpp1.6', 'lowercase-uids').readerId(CARD)).toBe('04a23b1c');
    expect(wire('ocpp1.6', 'uid-separators').readerId(CARD)).toBe('04:A2:3B:1C');
    expect(wire('ocpp1.6', 'uid-separators=-', 'lowercase-uids').readerId(CARD)).toBe(
      '04-a2-3b-1c',
    );
    expect(wire('ocpp2.0.1', 'uid-separators=space').readerId(CARD)).toBe('04 A2 3B 1C');
    expect(wire('ocpp1.6', 'uid-leading-zeros').readerId(CARD)).toBe(
      '000000000' + '4A23B1C'.padStart(7, '0'),
    );
    expect(wire('ocpp1.6', 'uid-leading-zeros=10').readerId('A453EE033156')).toBe('A453EE033156');
    expect(wire('ocpp1.6', 'uid-leading-zeros=20').readerId('A453EE033156')).toBe(
      '00000000A453EE033156',
    );
    expect(wire('ocpp1.6', 'lowercase-uids', 'uid-separators').readerId('KEY-1234')).toBe(
      'KEY-1234',
    );
  });

  it('pads every idTag and idToken to its 21-byte buffer with NULs or spaces', () => {
    const nul = wire('ocpp1.6', 'padded-tokens');
    expect(nul.request('Authorize', { idTag: CARD })).toEqual({ idTag: CARD.padEnd(21, '\0') });
    const space = wire('ocpp2.0.1', 'padded-tokens=space');
    expect(space.request('Authorize', { idToken: { idToken: CARD, type: 'ISO14443' } })).toEqual({
      idToken: { idToken: `${CARD}${' '.repeat(13)}`, type: 'ISO14443' },
    });
    // The gateway's 20-character one-time tokens get the buffer's last byte.
    const token = 'ABCDEFGHJKLMNPQRSTUV';
    expect(
      nul.request('StartTransaction', {
        connectorId: 1,
        idTag: token,
        meterStart: 0,
        timestamp: '2026-12-06T00:00:00.000Z',
      }),
    ).toMatchObject({ idTag: `${token}\0` });
  });

  it('refuses values the personalities do not take', () => {
    expect(() => Personality.parse(['uid-separators=/'], 'ocpp1.6')).toThrow(/takes no value/);
    expect(() => Personality.parse(['uid-leading-zeros=4'], 'ocpp1.6')).toThrow(/takes no value/);
    expect(() => Personality.parse(['padded-tokens=tab'], 'ocpp2.0.1')).toThrow(/takes no value/);
  });
});
