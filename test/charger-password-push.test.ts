import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../src/ocpp/connection/charger-password.js';
import { startTestGateway, type TestGateway, UNPHYSICAL_KW } from './helpers/gateway.js';
import { errorCode } from './helpers/http.js';
import { createOperator, op } from './helpers/operator.js';
import { rawCharger, type RawClient } from './helpers/raw-charger.js';
import { bootedCharger, ocpp16, ocpp201 } from './helpers/simulated-charger.js';
import { waitUntil } from './helpers/wait.js';

const OLD = 'old-charger-password-01';
/** 20 bytes: the most a 1.6 AuthorizationKey (40 hex digits) holds. */
const NEW_16 = 'new-1.6-password-020';
const NEW_201 = 'new-2.0.1-password-of-32-chars-x';
const IDS = ['CP-16', 'CP-201', 'CP-REFUSES-16', 'CP-REFUSES-201', 'CP-MUTE', 'CP-AWAY', 'CP-LONG'];

let t: TestGateway;
let operator: string;

beforeAll(async () => {
  const passwordHash = hashPassword(OLD);
  t = await startTestGateway({
    ocpp: {
      meterSampleIntervalSeconds: 10,
      callTimeoutSeconds: 1,
      authFailureDelay: { initialMilliseconds: 5, maxMilliseconds: 40 },
    },
    chargers: IDS.map((id) => ({
      id,
      passwordHash,
      connectors: [{ id: '1', tariff: 'dc', maxPowerKw: UNPHYSICAL_KW }],
    })),
    log: { level: 'trace' },
  });
  operator = createOperator(t.gw.db, 'otto', 'operator');
});
afterAll(async () => t?.close());

const push = (id: string, password: string, overlapSeconds = 600) =>
  op(t.gw.operatorUrl, operator, 'POST', `/chargers/${id}/password`, {
    password,
    overlapSeconds,
    setOnCharger: true,
  });

async function admits(id: string, password: string, protocol = 'ocpp1.6'): Promise<boolean> {
  try {
    const cp = await rawCharger(t.gw.ocppUrl, id, password, [protocol]);
    await cp.close({ code: 1000 });
    return true;
  } catch (err) {
    if (/Unauthorized/.test(String(err))) return false;
    throw err;
  }
}

const confirmed = (id: string) =>
  t.gw.db
    .prepare(
      'SELECT 1 FROM charger_password_pushes WHERE charger_id = ? AND confirmed_at IS NOT NULL',
    )
    .get(id);

describe('a password rotation that sets the new password on the charger (the bundled simulators)', () => {
  it.each([
    ['1.6', ocpp16, 'CP-16', NEW_16],
    ['2.0.1', ocpp201, 'CP-201', NEW_201],
  ])(
    '%s: the charger takes it, reconnects with it, and the old one is refused from then on',
    async (_version, protocol, id, next) => {
      const cp = await bootedCharger(protocol, t.gw, id, { password: OLD });
      try {
        const before = t.clock.now();
        const res = await push(id, next);
        expect(res.status).toBe(200);
        const body = res.body as { previousPasswordsEndAt: string };
        expect(body).toEqual({
          chargerId: id,
          previousPasswordsEndAt: expect.any(String),
          charger: { status: 'Accepted', accepted: true },
        });
        const overlapEnd = Date.parse(body.previousPasswordsEndAt);
        expect(overlapEnd).toBeGreaterThanOrEqual(before + 600_000);
        expect(overlapEnd).toBeLessThanOrEqual(t.clock.now() + 600_000);
        await waitUntil(() => confirmed(id), 5000, `${id} reconnected with the new password`);
        await waitUntil(() => t.gw.chargers.isOnline(id) || undefined, 5000, `${id} online`);
        expect(cp.isBooted).toBe(true);
        // Within the overlap, yet refused: the charger has shown it holds the new one.
        expect(await admits(id, OLD)).toBe(false);
      } finally {
        await cp.disconnect();
      }
      expect(await admits(id, next)).toBe(true);
    },
  );
});

describe('when the charger does not take it', () => {
  /** A charger that answers the password call as `answer` says (the rest: Accepted). */
  async function charger(
    id: string,
    protocol: string,
    answer: (params: unknown) => Promise<Record<string, unknown>> | Record<string, unknown>,
  ) {
    const cp = await rawCharger(t.gw.ocppUrl, id, OLD, [protocol]);
    const seen: unknown[] = [];
    cp.handle(protocol === 'ocpp1.6' ? 'ChangeConfiguration' : 'SetVariables', ({ params }) => {
      seen.push(params);
      return Promise.resolve(answer(params));
    });
    await waitUntil(() => t.gw.chargers.isOnline(id) || undefined, 5000, `${id} online`);
    return { cp, seen };
  }

  it('1.6: a Rejected AuthorizationKey (sent as the hex of the password) leaves the old password the only one', async () => {
    const { cp, seen } = await charger('CP-REFUSES-16', 'ocpp1.6', () => ({ status: 'Rejected' }));
    const res = await push('CP-REFUSES-16', NEW_16);
    await cp.close({ code: 1000 });
    expect(seen).toEqual([
      { key: 'AuthorizationKey', value: Buffer.from(NEW_16, 'utf8').toString('hex') },
    ]);
    expect(res.body).toEqual({
      chargerId: 'CP-REFUSES-16',
      previousPasswordsEndAt: null,
      charger: { status: 'Rejected', accepted: false },
    });
    t.clock.advance(601_000);
    expect(await admits('CP-REFUSES-16', OLD)).toBe(true);
    expect(await admits('CP-REFUSES-16', NEW_16)).toBe(false);
  });

  it('2.0.1: a Rejected BasicAuthPassword likewise', async () => {
    const { cp, seen } = await charger('CP-REFUSES-201', 'ocpp2.0.1', () => ({
      setVariableResult: [
        {
          attributeStatus: 'Rejected',
          component: { name: 'SecurityCtrlr' },
          variable: { name: 'BasicAuthPassword' },
        },
      ],
    }));
    const res = await push('CP-REFUSES-201', NEW_201);
    await cp.close({ code: 1000 });
    expect(seen).toEqual([
      {
        setVariableData: [
          {
            component: { name: 'SecurityCtrlr' },
            variable: { name: 'BasicAuthPassword' },
            attributeValue: NEW_201,
          },
        ],
      },
    ]);
    expect(res.body).toMatchObject({ previousPasswordsEndAt: null, charger: { accepted: false } });
    expect(await admits('CP-REFUSES-201', OLD, 'ocpp2.0.1')).toBe(true);
    expect(await admits('CP-REFUSES-201', NEW_201, 'ocpp2.0.1')).toBe(false);
  });

  it('no answer: both stay valid (it may have taken it) until the charger connects with the new one', async () => {
    let cp: RawClient | undefined;
    try {
      ({ cp } = await charger(
        'CP-MUTE',
        'ocpp1.6',
        () => new Promise<Record<string, unknown>>(() => {}),
      ));
      const res = await push('CP-MUTE', NEW_16);
      expect(res.status).toBe(504);
      expect(errorCode(res)).toBe('charger_timeout');
    } finally {
      await cp?.close({ code: 1000, force: true });
    }
    t.clock.advance(3_600_000);
    expect(await admits('CP-MUTE', OLD)).toBe(true);
    expect(await admits('CP-MUTE', NEW_16)).toBe(true);
    expect(await admits('CP-MUTE', OLD)).toBe(false);
  });

  it('offline, or a 1.6 password longer than an AuthorizationKey holds: nothing is sent and nothing changes', async () => {
    const away = await push('CP-AWAY', NEW_16);
    expect([away.status, errorCode(away)]).toEqual([503, 'charger_offline']);
    const { cp, seen } = await charger('CP-LONG', 'ocpp1.6', () => ({ status: 'Accepted' }));
    const long = await push('CP-LONG', NEW_201);
    await cp.close({ code: 1000 });
    expect([long.status, errorCode(long)]).toEqual([400, 'invalid_request']);
    expect(seen).toEqual([]);
    expect(await admits('CP-AWAY', OLD)).toBe(true);
    expect(await admits('CP-AWAY', NEW_16)).toBe(false);
    expect(await admits('CP-LONG', OLD)).toBe(true);
    expect(await admits('CP-LONG', NEW_201)).toBe(false);
  });
});

describe('secrets', () => {
  it('no password is logged, kept in a table or answered; the audit names the rotation without it', () => {
    const log = t.logLines.join('\n');
    const tables = (
      t.gw.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
        name: string;
      }[]
    )
      .map(({ name }) => JSON.stringify(t.gw.db.prepare(`SELECT * FROM "${name}"`).all()))
      .join('\n');
    for (const secret of [OLD, NEW_16, NEW_201]) {
      for (const form of [secret, Buffer.from(secret).toString('hex')]) {
        expect(log).not.toContain(form);
        expect(tables).not.toContain(form);
      }
    }
    const audit = t.gw.db
      .prepare("SELECT params FROM operator_audit WHERE action = 'charger.password_rotate'")
      .all() as { params: string }[];
    expect(audit.length).toBeGreaterThanOrEqual(6);
    for (const row of audit)
      expect(JSON.parse(row.params)).toMatchObject({ body: { password: '[redacted]' } });
  });
});
