import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHARGER_PASSWORD, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { errorCode } from './helpers/http.js';
import { createOperator, op } from './helpers/operator.js';
import { rawCharger } from './helpers/raw-charger.js';
import { waitUntil } from './helpers/wait.js';

let t: TestGateway;
let viewer: string;
let operator: string;
const FIRST = 'first-password-0000001';
const SECOND = 'second-password-000002';

async function connects(id: string, password: string | undefined): Promise<true> {
  const cp = await rawCharger(t.gw.ocppUrl, id, password, ['ocpp1.6']);
  await cp.close({ code: 1000 });
  return true;
}

beforeAll(async () => {
  t = await startTestGateway();
  viewer = createOperator(t.gw.db, 'vera', 'viewer');
  operator = createOperator(t.gw.db, 'otto', 'operator');
});
afterAll(async () => t.close());

describe('chargers at runtime, without a restart', () => {
  it('adds a charger that is accepted at once with its password, and refused with another', async () => {
    await expect(connects('CP-NEW', FIRST)).rejects.toThrow(/Not Found|404/);
    const added = await op(t.gw.operatorUrl, operator, 'POST', '/chargers', {
      id: 'CP-NEW',
      securityProfile: 1,
      password: FIRST,
      connectors: [{ id: '1', tariff: 'ac' }],
    });
    expect(added.status).toBe(200);
    await expect(connects('CP-NEW', FIRST)).resolves.toBe(true);
    await expect(connects('CP-NEW', SECOND)).rejects.toThrow(/Unauthorized/);
    const list = await op(t.gw.operatorUrl, viewer, 'GET', '/chargers');
    expect(
      (list.body as { chargers: { chargerId: string }[] }).chargers.map((c) => c.chargerId),
    ).toContain('CP-NEW');
    const audit = t.gw.db
      .prepare("SELECT params FROM operator_audit WHERE action = 'charger.add'")
      .get() as { params: string };
    expect(audit.params).not.toContain(FIRST);
    expect(JSON.parse(audit.params)).toMatchObject({ body: { password: '[redacted]' } });
  });

  it('refuses a duplicate, an unknown tariff, a missing password and a viewer, changing nothing', async () => {
    const cases: [string, unknown, number, string][] = [
      [
        operator,
        {
          id: 'CP-1',
          securityProfile: 1,
          password: FIRST,
          connectors: [{ id: '1', tariff: 'ac' }],
        },
        409,
        'charger_exists',
      ],
      [
        operator,
        {
          id: 'CP-X',
          securityProfile: 1,
          password: FIRST,
          connectors: [{ id: '1', tariff: 'gold' }],
        },
        400,
        'unknown_tariff',
      ],
      [
        operator,
        { id: 'CP-X', securityProfile: 1, connectors: [{ id: '1', tariff: 'ac' }] },
        400,
        'invalid_request',
      ],
      [
        operator,
        {
          id: 'CP-X',
          securityProfile: 2,
          password: FIRST,
          connectors: [{ id: '1', tariff: 'ac' }],
        },
        400,
        'invalid_request',
      ],
      [
        operator,
        {
          id: 'CP-X',
          securityProfile: 1,
          password: 'short',
          connectors: [{ id: '1', tariff: 'ac' }],
        },
        400,
        'invalid_request',
      ],
      [
        operator,
        {
          id: 'CP X',
          securityProfile: 1,
          password: FIRST,
          connectors: [{ id: '1', tariff: 'ac' }],
        },
        400,
        'invalid_request',
      ],
      [
        operator,
        {
          id: 'CP-X',
          securityProfile: 1,
          password: FIRST,
          connectors: [{ id: 'a', tariff: 'ac' }],
        },
        400,
        'invalid_request',
      ],
      [
        viewer,
        {
          id: 'CP-X',
          securityProfile: 1,
          password: FIRST,
          connectors: [{ id: '1', tariff: 'ac' }],
        },
        403,
        'forbidden',
      ],
    ];
    for (const [who, body, status, code] of cases) {
      const res = await op(t.gw.operatorUrl, who, 'POST', '/chargers', body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(errorCode(res)).toBe(code);
    }
    expect(t.gw.db.prepare("SELECT 1 FROM site_chargers WHERE id = 'CP-X'").get()).toBeUndefined();
  });

  it('rotates a password: both work during the overlap, only the new one after it', async () => {
    const res = await op(t.gw.operatorUrl, operator, 'POST', '/chargers/CP-NEW/password', {
      password: SECOND,
      overlapSeconds: 600,
    });
    expect(res.status).toBe(200);
    await expect(connects('CP-NEW', FIRST)).resolves.toBe(true);
    await expect(connects('CP-NEW', SECOND)).resolves.toBe(true);
    t.clock.advance(601_000);
    await expect(connects('CP-NEW', FIRST)).rejects.toThrow(/Unauthorized/);
    await expect(connects('CP-NEW', SECOND)).resolves.toBe(true);
  });

  it('rotates the password of a charger from the config file, and keeps it across a restart', async () => {
    const NEXT = 'config-charger-next-pw-1';
    const res = await op(t.gw.operatorUrl, operator, 'POST', '/chargers/CP-AC/password', {
      password: NEXT,
      overlapSeconds: 0,
    });
    expect(res.status).toBe(200);
    await expect(connects('CP-AC', CHARGER_PASSWORD)).rejects.toThrow(/Unauthorized/);
    await t.restart();
    await expect(connects('CP-AC', NEXT)).resolves.toBe(true);
    await expect(connects('CP-AC', CHARGER_PASSWORD)).rejects.toThrow(/Unauthorized/);
    await expect(connects('CP-NEW', SECOND)).resolves.toBe(true);
    await expect(connects('CP-1', CHARGER_PASSWORD)).resolves.toBe(true);
  });

  it('retires a charger: its connection ends and it is refused from then on', async () => {
    const cp = await rawCharger(t.gw.ocppUrl, 'CP-NEW', SECOND, ['ocpp1.6']);
    const closed = new Promise((resolve) => cp.once('close', resolve));
    await waitUntil(
      async () =>
        (
          (await op(t.gw.operatorUrl, viewer, 'GET', '/chargers/CP-NEW')).body as {
            connected: boolean;
          }
        ).connected || undefined,
      5000,
      'connected',
    );
    const res = await op(t.gw.operatorUrl, operator, 'POST', '/chargers/CP-NEW/retire');
    expect(res.body).toEqual({ chargerId: 'CP-NEW', disconnected: true });
    await closed;
    await expect(connects('CP-NEW', SECOND)).rejects.toThrow(/Not Found|404/);
    const again = await op(t.gw.operatorUrl, operator, 'POST', '/chargers/CP-NEW/retire');
    expect(again.status).toBe(404);
    expect(errorCode(again)).toBe('charger_not_found');
    // An id is never reused: its sessions and events keep meaning one charger.
    const readd = await op(t.gw.operatorUrl, operator, 'POST', '/chargers', {
      id: 'CP-NEW',
      securityProfile: 1,
      password: FIRST,
      connectors: [{ id: '1', tariff: 'ac' }],
    });
    expect(readd.status).toBe(409);
    expect(errorCode(readd)).toBe('charger_exists');
  });
});
