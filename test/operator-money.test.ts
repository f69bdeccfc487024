import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, DRIVERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { errorCode, mintToken } from './helpers/http.js';
import { createOperator, op } from './helpers/operator.js';

let t: TestGateway;
let viewer: string;
let operator: string;

beforeAll(async () => {
  t = await startTestGateway();
  viewer = createOperator(t.gw.db, 'vera', 'viewer');
  operator = createOperator(t.gw.db, 'otto', 'operator');
});
afterAll(async () => t.close());

function balance(driverId: string): number {
  return (
    t.gw.db.prepare('SELECT balance FROM wallets WHERE driver_id = ?').get(driverId) as {
      balance: number;
    }
  ).balance;
}
function ledgerCount(): number {
  return (t.gw.db.prepare('SELECT count(*) AS n FROM ledger_entries').get() as { n: number }).n;
}
function auditRows(action: string) {
  return t.gw.db
    .prepare('SELECT * FROM operator_audit WHERE action = ? ORDER BY seq')
    .all(action) as { operator_name: string; params: string; status: number; result: string }[];
}
const key = () => ({ 'idempotency-key': randomUUID() });

describe('operator money: top-ups and adjustments', () => {
  it('tops up once per Idempotency-Key, with the operator and reason on the entry and its outbox row', async () => {
    const before = balance(DRIVERS.bola.id);
    const headers = key();
    const body = { amount: 2_500, reason: 'cash paid at the kiosk' };
    const first = await op(
      t.gw.operatorUrl,
      operator,
      'POST',
      `/drivers/${DRIVERS.bola.id}/top-ups`,
      body,
      headers,
    );
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      driverId: DRIVERS.bola.id,
      kind: 'top_up',
      amount: 2_500,
      balanceAfter: before + 2_500,
    });
    const again = await op(
      t.gw.operatorUrl,
      operator,
      'POST',
      `/drivers/${DRIVERS.bola.id}/top-ups`,
      body,
      headers,
    );
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(balance(DRIVERS.bola.id)).toBe(before + 2_500);

    const entryId = (first.body as { ledgerEntryId: string }).ledgerEntryId;
    const note = t.gw.db
      .prepare('SELECT actor, reason FROM ledger_notes WHERE entry_id = ?')
      .get(entryId);
    expect(note).toEqual({ actor: 'operator:otto', reason: 'cash paid at the kiosk' });
    const outbox = t.gw.db
      .prepare("SELECT payload FROM outbox WHERE topic = 'ledger' AND payload LIKE ?")
      .all(`%${entryId}%`) as { payload: string }[];
    expect(outbox).toHaveLength(1);
    expect(JSON.parse(outbox[0]!.payload)).toMatchObject({
      type: 'ledger_entry',
      entry: { id: entryId, kind: 'top_up', reference: `op:${headers['idempotency-key']}` },
      note: { actor: 'operator:otto', reason: 'cash paid at the kiosk' },
    });
    const audit = auditRows('wallet.top_up');
    expect(audit).toHaveLength(2);
    expect(audit[0]).toMatchObject({ operator_name: 'otto', status: 200 });
    expect(JSON.parse(audit[0]!.result)).toMatchObject({ ledgerEntryId: entryId, replayed: false });
    expect(JSON.parse(audit[1]!.result)).toMatchObject({ replayed: true });
  });

  it('refuses the same key with another request (422) and moves nothing', async () => {
    const headers = key();
    const ok = await op(
      t.gw.operatorUrl,
      operator,
      'POST',
      `/drivers/${DRIVERS.ada.id}/top-ups`,
      { amount: 10 },
      headers,
    );
    expect(ok.status).toBe(200);
    const n = ledgerCount();
    const other = await op(
      t.gw.operatorUrl,
      operator,
      'POST',
      `/drivers/${DRIVERS.ada.id}/top-ups`,
      { amount: 11 },
      headers,
    );
    expect(other.status).toBe(422);
    expect(errorCode(other)).toBe('idempotency_key_reused');
    expect(ledgerCount()).toBe(n);
  });

  it('never takes a wallet below zero (402) and records the refusal', async () => {
    const b = balance(DRIVERS.gone.id);
    const res = await op(
      t.gw.operatorUrl,
      operator,
      'POST',
      `/drivers/${DRIVERS.gone.id}/adjustments`,
      { amount: -(b + 1), reason: 'too much' },
      key(),
    );
    expect(res.status).toBe(402);
    expect(errorCode(res)).toBe('insufficient_balance');
    expect(balance(DRIVERS.gone.id)).toBe(b);
    const exact = await op(
      t.gw.operatorUrl,
      operator,
      'POST',
      `/drivers/${DRIVERS.gone.id}/adjustments`,
      { amount: -b, reason: 'left the fleet' },
      key(),
    );
    expect(exact.status).toBe(200);
    expect(balance(DRIVERS.gone.id)).toBe(0);
    const audit = auditRows('wallet.adjustment');
    expect(audit.map((a) => a.status)).toEqual([402, 200]);
    expect(JSON.parse(audit[0]!.result)).toEqual({ error: 'insufficient_balance' });
  });

  it('refuses bad input without a change: missing key, zero, fractions, extra fields, unknown driver', async () => {
    const n = ledgerCount();
    const path = `/drivers/${DRIVERS.ada.id}/adjustments`;
    const cases: [unknown, Record<string, string>, number, string][] = [
      [{ amount: 5, reason: 'x' }, {}, 400, 'invalid_request'],
      [{ amount: 0, reason: 'x' }, key(), 400, 'invalid_request'],
      [{ amount: 1.5, reason: 'x' }, key(), 400, 'invalid_request'],
      [{ amount: '5', reason: 'x' }, key(), 400, 'invalid_request'],
      [{ amount: 5 }, key(), 400, 'invalid_request'],
      [{ amount: 5, reason: 'x', operator: 'me' }, key(), 400, 'invalid_request'],
      ['{not json', key(), 400, 'invalid_request'],
    ];
    for (const [body, headers, status, code] of cases) {
      const res = await op(t.gw.operatorUrl, operator, 'POST', path, body, headers);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(errorCode(res)).toBe(code);
    }
    const unknown = await op(
      t.gw.operatorUrl,
      operator,
      'POST',
      '/drivers/nobody/top-ups',
      { amount: 5 },
      key(),
    );
    expect(unknown.status).toBe(404);
    expect(errorCode(unknown)).toBe('driver_not_found');
    expect(ledgerCount()).toBe(n);
  });

  it('a viewer cannot move money (403, audited)', async () => {
    const n = ledgerCount();
    const res = await op(
      t.gw.operatorUrl,
      viewer,
      'POST',
      `/drivers/${DRIVERS.ada.id}/top-ups`,
      { amount: 5 },
      key(),
    );
    expect(res.status).toBe(403);
    expect(errorCode(res)).toBe('forbidden');
    expect(ledgerCount()).toBe(n);
    const refused = auditRows('wallet.top_up').filter((a) => a.operator_name === 'vera');
    expect(refused).toHaveLength(1);
    expect(refused[0]!.status).toBe(403);
  });
});

describe('operator roster: fleets, drivers, vehicles, API keys', () => {
  it('adds a fleet and a driver, assigns a vehicle, deactivates the driver', async () => {
    expect(
      (
        await op(t.gw.operatorUrl, operator, 'PUT', '/fleets/fleet-c', {
          name: 'Fleet C',
          create: true,
        })
      ).body,
    ).toEqual({ created: true, changed: true });
    const put = await op(t.gw.operatorUrl, operator, 'PUT', '/drivers/drv-new', {
      fleetId: 'fleet-c',
      email: 'New@Fleet.test',
    });
    expect(put.body).toEqual({ created: true, changed: true });
    const samePut = await op(t.gw.operatorUrl, operator, 'PUT', '/drivers/drv-new', {
      fleetId: 'fleet-c',
      email: 'new@fleet.test',
    });
    expect(samePut.body).toEqual({ created: false, changed: false });
    const moved = await op(t.gw.operatorUrl, operator, 'PUT', `/drivers/${DRIVERS.ada.id}`, {
      fleetId: 'fleet-c',
      email: 'a@b.c',
    });
    expect(moved.status).toBe(409);
    expect(errorCode(moved)).toBe('driver_in_other_fleet');
    const veh = await op(t.gw.operatorUrl, operator, 'PUT', '/drivers/drv-new/vehicle', {
      vehicle: { model: 'BYD Atto 3', batteryKwh: 60.5 },
    });
    expect(veh.body).toEqual({ changed: true });
    const row = t.gw.db
      .prepare('SELECT email, active, vehicle_battery_wh FROM drivers WHERE id = ?')
      .get('drv-new');
    expect(row).toEqual({ email: 'new@fleet.test', active: 1, vehicle_battery_wh: 60_500 });
    expect(
      (await op(t.gw.operatorUrl, operator, 'POST', '/drivers/drv-new/deactivate')).body,
    ).toEqual({ changed: true });
    expect(balance('drv-new')).toBe(0);
  });

  it('creates a fleet only on purpose; a fleet with nothing in it can be deleted', async () => {
    const fleets = () => t.gw.db.prepare('SELECT id FROM fleets ORDER BY id').all();
    const before = fleets();
    const typo = await op(t.gw.operatorUrl, operator, 'PUT', '/fleets/flete-a', {
      name: 'Fleet A',
    });
    expect(typo.status).toBe(404);
    expect(errorCode(typo)).toBe('fleet_not_found');
    expect(fleets()).toEqual(before);
    const rename = await op(t.gw.operatorUrl, operator, 'PUT', '/fleets/fleet-b', {
      name: 'Fleet B, Ikeja',
    });
    expect(rename.body).toEqual({ created: false, changed: true });

    // A fleet made by mistake (as the old PUT did) goes again while nothing belongs to it.
    const made = await op(t.gw.operatorUrl, operator, 'PUT', '/fleets/fleet-tmp', {
      name: 'made by mistake',
      create: true,
    });
    expect(made.body).toEqual({ created: true, changed: true });
    const gone = await op(t.gw.operatorUrl, operator, 'DELETE', '/fleets/fleet-tmp');
    expect(gone.body).toEqual({ deleted: true });
    expect(fleets()).toEqual(before);
    const again = await op(t.gw.operatorUrl, operator, 'DELETE', '/fleets/fleet-tmp');
    expect(errorCode(again)).toBe('fleet_not_found');
    // One with drivers (and so wallets and money) stays.
    const full = await op(t.gw.operatorUrl, operator, 'DELETE', '/fleets/fleet-a');
    expect(full.status).toBe(409);
    expect(errorCode(full)).toBe('fleet_not_empty');
    expect((await op(t.gw.operatorUrl, viewer, 'DELETE', '/fleets/fleet-b')).status).toBe(403);
    expect(fleets()).toEqual(before);
    expect(auditRows('fleet.delete').map((a) => a.status)).toEqual([200, 404, 409, 403]);
  });

  it('creates, lists, rotates and revokes fleet API keys; the key is shown once and works at once', async () => {
    const created = await op(t.gw.operatorUrl, operator, 'POST', '/fleets/fleet-a/api-keys', {
      label: 'backend',
    });
    expect(created.status).toBe(200);
    const { apiKey, keyId } = created.body as { apiKey: string; keyId: string };
    expect(apiKey).toMatch(/^fgk_/);
    await mintToken(t.gw.url, apiKey, DRIVERS.ada.email);

    const list = await op(t.gw.operatorUrl, viewer, 'GET', '/fleets/fleet-a/api-keys');
    expect(JSON.stringify(list.body)).not.toContain(apiKey);
    expect(JSON.stringify(list.body)).not.toMatch(/[0-9a-f]{64}/);
    expect((list.body as { apiKeys: { keyId: string }[] }).apiKeys.map((k) => k.keyId)).toContain(
      keyId,
    );

    const rotated = await op(
      t.gw.operatorUrl,
      operator,
      'POST',
      `/fleets/fleet-a/api-keys/${keyId}/rotate`,
      { overlapHours: 1 },
    );
    expect(rotated.status).toBe(200);
    const next = (rotated.body as { apiKey: string }).apiKey;
    await mintToken(t.gw.url, apiKey, DRIVERS.ada.email); // overlap: the old key still works
    await mintToken(t.gw.url, next, DRIVERS.ada.email);

    const revoked = await op(
      t.gw.operatorUrl,
      operator,
      'POST',
      `/fleets/fleet-a/api-keys/${keyId}/revoke`,
    );
    expect(revoked.status).toBe(200);
    await expect(mintToken(t.gw.url, apiKey, DRIVERS.ada.email)).rejects.toThrow(/401/);
    await mintToken(t.gw.url, API_KEY, DRIVERS.ada.email);

    const audit = t.gw.db
      .prepare("SELECT result FROM operator_audit WHERE action LIKE 'api_key.%'")
      .all() as { result: string }[];
    for (const a of audit) {
      expect(a.result).not.toContain(apiKey);
      expect(a.result).not.toContain(next);
    }
    expect(audit).toHaveLength(3);

    const unknown = await op(
      t.gw.operatorUrl,
      operator,
      'POST',
      '/fleets/fleet-a/api-keys/deadbeefdeadbeef/revoke',
    );
    expect(unknown.status).toBe(404);
    expect(errorCode(unknown)).toBe('api_key_not_found');
  });
});
