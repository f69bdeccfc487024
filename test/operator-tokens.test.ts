import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdTokenStore } from '../src/id-tokens/id-token-store.js';
import { tokenValueProblem } from '../src/id-tokens/token-input.js';
import { DRIVERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { errorCode } from './helpers/http.js';
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

const ada = DRIVERS.ada.id;
const bola = DRIVERS.bola.id;
const bind = (driverId: string, body: Record<string, unknown>, who = operator) =>
  op(t.gw.operatorUrl, who, 'POST', `/drivers/${driverId}/tokens`, body);
const list = async (driverId: string) =>
  (
    (await op(t.gw.operatorUrl, viewer, 'GET', `/drivers/${driverId}/tokens`)).body as {
      tokens: Record<string, unknown>[];
    }
  ).tokens;
const search = async (value: string) =>
  (
    (await op(t.gw.operatorUrl, viewer, 'GET', `/tokens?search=${encodeURIComponent(value)}`))
      .body as { tokens: Record<string, unknown>[] }
  ).tokens;
function auditRows(action: string) {
  return t.gw.db
    .prepare('SELECT params, status, result FROM operator_audit WHERE action = ? ORDER BY seq')
    .all(action) as { params: string; status: number; result: string }[];
}

describe('operator API: binding cards and vehicles to drivers', () => {
  let cardId: string;

  it('binds a card, shows its value once to the binder and masked everywhere after', async () => {
    const res = await bind(ada, {
      kind: 'card',
      type: 'ISO14443',
      value: ' 04:a2:3b:1c ',
      label: 'blue fob',
    });
    expect(res.status).toBe(200);
    const body = res.body as { created: boolean; value: string; token: Record<string, unknown> };
    expect(body).toMatchObject({
      created: true,
      changed: true,
      value: '04:a2:3b:1c',
      token: {
        driverId: ada,
        kind: 'card',
        type: 'ISO14443',
        masked: '•••3B1C',
        label: 'blue fob',
        state: 'active',
        source: 'operator',
        expiresAt: null,
      },
    });
    cardId = body.token.tokenId as string;
    const rows = await list(ada);
    expect(rows).toEqual([body.token]);
    expect(JSON.stringify(rows)).not.toMatch(/a2:3b|A23B/i);
    // The trail says which card, never the whole of it.
    const [audit] = auditRows('token.bind');
    expect(audit!.status).toBe(200);
    expect(audit!.params).not.toMatch(/a2:3b|A23B/i);
    expect(JSON.parse(audit!.params).body.value).toBe('•••3B1C');
    expect(JSON.parse(audit!.result)).toMatchObject({ tokenId: cardId, created: true });
  });

  it('finds the token by any form a charger sends, and nothing for a token not bound', async () => {
    for (const form of ['04A23B1C', '0004a23b1c', '04-A2-3B-1C', '4a23b1c']) {
      expect((await search(form)).map((r) => r.tokenId)).toEqual([cardId]);
    }
    expect(await search('04A23B1D')).toEqual([]);
    const missing = await op(t.gw.operatorUrl, viewer, 'GET', '/tokens');
    expect(errorCode(missing)).toBe('invalid_request');
  });

  it('binding the same card again updates it; to another driver is 409 token_bound_elsewhere, never moved', async () => {
    const again = await bind(ada, { kind: 'card', type: 'ISO14443', value: '04A23B1C' });
    expect(again.body).toMatchObject({ created: false, changed: true, token: { tokenId: cardId } });
    const same = await bind(ada, { kind: 'card', type: 'ISO14443', value: '04A23B1C' });
    expect(same.body).toMatchObject({ created: false, changed: false });
    const elsewhere = await bind(bola, { kind: 'card', type: 'ISO14443', value: '04 A2 3B 1C' });
    expect(elsewhere.status).toBe(409);
    expect(errorCode(elsewhere)).toBe('token_bound_elsewhere');
    expect(await list(bola)).toEqual([]);
    expect((await search('04A23B1C'))[0]).toMatchObject({ driverId: ada, label: 'blue fob' });
  });

  it('blocks and unblocks with a reason, each audited; an expired token shows expired', async () => {
    const path = `/drivers/${ada}/tokens/${cardId}`;
    const blocked = await op(t.gw.operatorUrl, operator, 'POST', `${path}/block`, {
      reason: 'reported lost',
    });
    expect(blocked.body).toMatchObject({
      changed: true,
      token: { state: 'blocked', blockedReason: 'reported lost' },
    });
    const judged = new IdTokenStore(t.gw.db).judge('04a23b1c', t.clock.now());
    expect(judged.status).toBe('blocked');
    const unblocked = await op(t.gw.operatorUrl, operator, 'POST', `${path}/unblock`);
    expect(unblocked.body).toMatchObject({ changed: true, token: { state: 'active' } });
    const twice = await op(t.gw.operatorUrl, operator, 'POST', `${path}/unblock`);
    expect(twice.body).toMatchObject({ changed: false });
    expect(auditRows('token.block').map((r) => r.status)).toEqual([200]);
    expect(auditRows('token.unblock').map((r) => r.status)).toEqual([200, 200]);

    const past = new Date(t.clock.now() - 60_000).toISOString();
    const vehicle = await bind(ada, {
      kind: 'vehicle',
      type: 'MacAddress',
      value: '00:23:a7:f1:c2:d4',
      expiresAt: past,
    });
    expect(vehicle.body).toMatchObject({ token: { kind: 'vehicle', state: 'expired' } });
    expect((await search('VID:0023A7F1C2D4'))[0]).toMatchObject({ state: 'expired' });
  });

  it('a viewer reads but cannot bind, block or unbind', async () => {
    const res = await bind(ada, { kind: 'card', type: 'Local', value: 'viewer-card' }, viewer);
    expect(res.status).toBe(403);
    const del = await op(t.gw.operatorUrl, viewer, 'DELETE', `/drivers/${ada}/tokens/${cardId}`);
    expect(del.status).toBe(403);
    expect(await search('viewer-card')).toEqual([]);
  });

  it('refuses values, types and drivers at the edge, masked in the trail', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      [ada, { kind: 'card', type: 'ISO14443', value: '   ' }, 'invalid_request'],
      [ada, { kind: 'card', type: 'ISO14443', value: 'A'.repeat(37) }, 'invalid_request'],
      [ada, { kind: 'card', type: 'ISO14443', value: 'AB\u0001CD' }, 'invalid_request'],
      [ada, { kind: 'card', type: 'Mifare', value: 'ABCDEF01' }, 'invalid_request'],
      [ada, { kind: 'badge', type: 'Local', value: 'ABCDEF01' }, 'invalid_request'],
      [ada, { kind: 'card', type: 'Local', value: 'ABCDEF01', extra: 1 }, 'invalid_request'],
      ['drv-nobody', { kind: 'card', type: 'Local', value: 'ABCDEF01' }, 'driver_not_found'],
    ];
    for (const [driverId, body, code] of cases) {
      expect(errorCode(await bind(driverId, body)), JSON.stringify(body)).toBe(code);
    }
    expect(await search('ABCDEF01')).toEqual([]);
    const trail = auditRows('token.bind')
      .map((r) => r.params)
      .join('\n');
    expect(trail).not.toContain('AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    expect(trail).not.toContain('ABCDEF01');
  });

  it('unbinds: the token is gone from the list and search, its row kept; then another driver may bind it', async () => {
    const res = await op(t.gw.operatorUrl, operator, 'DELETE', `/drivers/${ada}/tokens/${cardId}`);
    expect(res.body).toEqual({ changed: true });
    const again = await op(
      t.gw.operatorUrl,
      operator,
      'DELETE',
      `/drivers/${ada}/tokens/${cardId}`,
    );
    expect(errorCode(again)).toBe('token_not_found');
    expect((await list(ada)).map((r) => r.tokenId)).not.toContain(cardId);
    expect(await search('04A23B1C')).toEqual([]);
    expect(t.gw.db.prepare('SELECT unbound_at FROM id_tokens WHERE id = ?').get(cardId)).toEqual({
      unbound_at: expect.any(String),
    });
    const rebound = await bind(bola, { kind: 'card', type: 'ISO14443', value: '04A23B1C' });
    expect(rebound.body).toMatchObject({ created: true, token: { driverId: bola } });
    expect(auditRows('token.unbind').map((r) => r.status)).toEqual([403, 200, 404]);
  });

  it('a token id of another driver is 404 under this driver', async () => {
    const [bolaCard] = await list(bola);
    const res = await op(
      t.gw.operatorUrl,
      operator,
      'POST',
      `/drivers/${ada}/tokens/${bolaCard!.tokenId as string}/block`,
      {},
    );
    expect(errorCode(res)).toBe('token_not_found');
    expect((await list(bola))[0]).toMatchObject({ state: 'active' });
  });

  it('blocks without a body, with the operator’s default reason', async () => {
    const [bolaCard] = await list(bola);
    const res = await op(
      t.gw.operatorUrl,
      operator,
      'POST',
      `/drivers/${bola}/tokens/${bolaCard!.tokenId as string}/block`,
    );
    expect(res.body).toMatchObject({
      changed: true,
      token: { state: 'blocked', blockedReason: 'blocked by the site operator' },
    });
  });
});

describe('the edge rule for a token value', () => {
  it('accepts only what the store and the schema keep', () => {
    const store = new IdTokenStore(t.gw.db);
    const at = new Date().toISOString();
    fc.assert(
      fc.property(fc.string({ maxLength: 48 }), (raw) => {
        if (tokenValueProblem(raw) !== null) return;
        // Whatever the edge lets through binds (no CHECK or store error), then unbinds.
        t.gw.db.transaction(() => {
          const token =
            store.find(raw) ??
            store.bind(
              {
                driverId: DRIVERS.other.id,
                kind: 'card',
                type: 'Local',
                value: raw,
                source: 'operator',
              },
              at,
            );
          store.unbind(token.id, at);
        })();
      }),
      { numRuns: 300 },
    );
  });
});
