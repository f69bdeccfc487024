import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { Cloud } from './helpers/cloud.js';
import { startBroker, type TestBroker } from './helpers/mqtt-broker.js';
import { createOperator, op } from './helpers/operator.js';
import { waitUntil } from './helpers/wait.js';

const PREFIX = 'fleetgw/test-site/';
let broker: TestBroker;
let t: TestGateway;
let cloud: Cloud;
let operator: string;

beforeAll(async () => {
  broker = await startBroker();
  t = await startTestGateway({ uplink: { url: broker.url, reconnectSeconds: 0.2 } });
  cloud = await Cloud.connect(broker.url, PREFIX);
  operator = createOperator(t.gw.db, 'otto', 'operator');
  await waitUntil(
    () => cloud.of('gateway').some((g) => g.online === true),
    10_000,
    'gateway online',
  );
});
afterAll(async () => {
  await cloud?.close();
  await t?.close();
  await broker?.close();
});

const ada = DRIVERS.ada.id;
const bola = DRIVERS.bola.id;

interface TokenRow {
  id: string;
  driver_id: string;
  source: string;
  label: string;
  blocked_reason: string | null;
  unbound_at: string | null;
}
const rows = (): TokenRow[] =>
  t.gw.db
    .prepare(
      'SELECT id, driver_id, source, label, blocked_reason, unbound_at FROM id_tokens ORDER BY created_at, id',
    )
    .all() as TokenRow[];
const bound = (): TokenRow[] => rows().filter((r) => r.unbound_at === null);

async function send(command: Record<string, unknown>, status?: string) {
  await cloud.command(command);
  return cloud.reply(command.id as string, status);
}

describe('the MQTT roster binds drivers’ cards and vehicles', () => {
  it('binds a card once per command id, idempotent in effect, its reply masked', async () => {
    const bind = {
      id: 'tok-1',
      type: 'token_bind',
      driverId: ada,
      kind: 'card',
      tokenType: 'ISO14443',
      value: '04:a2:3b:1c',
      label: 'fleet card 17',
    };
    const reply = await send(bind, 'applied');
    expect(reply.result).toMatchObject({
      masked: '•••3B1C',
      created: true,
      changed: true,
      movedFrom: null,
    });
    expect(bound()).toEqual([expect.objectContaining({ driver_id: ada, source: 'cloud' })]);
    expect((await send(bind, 'duplicate')).result).toEqual(reply.result);
    const same = await send({ ...bind, id: 'tok-2', value: '04A23B1C' }, 'applied');
    expect(same.result).toMatchObject({
      created: false,
      tokenId: (reply.result as { tokenId: string }).tokenId,
    });
    const again = await send({ ...bind, id: 'tok-3', value: '04A23B1C' }, 'applied');
    expect(again.result).toMatchObject({ created: false, changed: false });
    expect(bound()).toHaveLength(1);
  });

  it('moves a card an operator bound to another driver, in one transaction; the session it runs keeps its wallet', async () => {
    const res = await op(t.gw.operatorUrl, operator, 'POST', `/drivers/${bola}/tokens`, {
      kind: 'card',
      type: 'ISO15693',
      value: 'E0040150A1B2C3D4',
    });
    const opTokenId = (res.body as { token: { tokenId: string } }).token.tokenId;
    // A session the card started for bola is charging (as the taps' side records one).
    t.gw.db
      .prepare(
        `INSERT INTO sessions (id, driver_id, charger_id, connector_id, state, amount,
           price_micro_ngn_per_wh, limit_wh, id_token, created_at, origin, id_token_id)
         VALUES ('ses-card-1', ?, 'CP-T', '1', 'charging', 500, 100000, 5000, 'card-tap-1', ?, 'card', ?)`,
      )
      .run(bola, new Date().toISOString(), opTokenId);

    const reply = await send(
      {
        id: 'tok-move',
        type: 'token_bind',
        driverId: ada,
        kind: 'card',
        tokenType: 'ISO15693',
        value: 'e0040150a1b2c3d4',
      },
      'applied',
    );
    expect(reply.result).toMatchObject({ created: true, movedFrom: bola });
    const old = rows().find((r) => r.id === opTokenId)!;
    expect(old).toMatchObject({ driver_id: bola, unbound_at: expect.any(String) });
    expect(
      bound()
        .filter((r) => r.id === (reply.result as { tokenId: string }).tokenId)
        .map((r) => [r.driver_id, r.source]),
    ).toEqual([[ada, 'cloud']]);
    expect(
      t.gw.db.prepare("SELECT driver_id, id_token_id FROM sessions WHERE id = 'ses-card-1'").get(),
    ).toEqual({ driver_id: bola, id_token_id: opTokenId });
    // The operator, by contrast, is refused: never moved by hand.
    const back = await op(t.gw.operatorUrl, operator, 'POST', `/drivers/${bola}/tokens`, {
      kind: 'card',
      type: 'ISO15693',
      value: 'E0040150A1B2C3D4',
    });
    expect(back.status).toBe(409);
  });

  it('blocks and unblocks by value; a driver named who does not hold it is refused, nothing changed', async () => {
    const before = rows();
    const wrong = await send(
      { id: 'tok-b0', type: 'token_block', value: '04A23B1C', driverId: bola },
      'rejected',
    );
    expect(wrong.reason).toBe('token_bound_elsewhere');
    expect(rows()).toEqual(before);

    const blocked = await send(
      { id: 'tok-b1', type: 'token_block', value: '04-A2-3B-1C', driverId: ada, reason: 'stolen' },
      'applied',
    );
    expect(blocked.result).toMatchObject({ changed: true, driverId: ada, masked: '•••3B1C' });
    expect(bound().find((r) => r.blocked_reason !== null)?.blocked_reason).toBe('stolen');
    // A bind does not unblock: only token_unblock does.
    await send(
      {
        id: 'tok-b2',
        type: 'token_bind',
        driverId: ada,
        kind: 'card',
        tokenType: 'ISO14443',
        value: '04A23B1C',
      },
      'applied',
    );
    expect(bound().find((r) => r.blocked_reason !== null)?.blocked_reason).toBe('stolen');
    const unblocked = await send({ id: 'tok-b3', type: 'token_unblock', value: '04a23b1c' });
    expect(unblocked).toMatchObject({ status: 'applied', result: { changed: true } });
    expect(bound().every((r) => r.blocked_reason === null)).toBe(true);
  });

  it('unbinds whoever bound it; unbinding again is applied with nothing changed; blocking it then is token_not_found', async () => {
    const unbound = await send(
      { id: 'tok-u1', type: 'token_unbind', value: '04A23B1C' },
      'applied',
    );
    expect(unbound.result).toMatchObject({ changed: true, driverId: ada });
    const again = await send({ id: 'tok-u2', type: 'token_unbind', value: '04A23B1C' }, 'applied');
    expect(again.result).toEqual({ tokenId: null, changed: false });
    const block = await send({ id: 'tok-u3', type: 'token_block', value: '04A23B1C' }, 'rejected');
    expect(block.reason).toBe('token_not_found');
  });

  it('refuses bad roster messages at the edge and reports them as every command is, changing nothing', async () => {
    const before = rows();
    const base = { type: 'token_bind', driverId: ada, kind: 'card', tokenType: 'ISO14443' };
    const bad: [Record<string, unknown>, string][] = [
      [{ ...base, id: 'bad-t1', value: '  \u0000 ' }, 'invalid_command'],
      [{ ...base, id: 'bad-t2', value: 'F'.repeat(37) }, 'invalid_command'],
      [{ ...base, id: 'bad-t3', value: 'AB\nCD' }, 'invalid_command'],
      [{ ...base, id: 'bad-t4', value: 'ABCDEF01', tokenType: 'Mifare' }, 'invalid_command'],
      [{ ...base, id: 'bad-t5', value: 'ABCDEF01', expiresAt: 'tomorrow' }, 'invalid_command'],
      [{ ...base, id: 'bad-t6', value: 'ABCDEF01', driverId: 'drv-nobody' }, 'driver_not_found'],
      [{ id: 'bad-t7', type: 'token_unblock', value: 'ABCDEF01' }, 'token_not_found'],
      [{ id: 'bad-t8', type: 'token_unbind' }, 'invalid_command'],
    ];
    for (const [command, reason] of bad) {
      const reply = await send(command, 'rejected');
      expect([command.id, reply.reason]).toEqual([command.id, reason]);
    }
    expect(rows()).toEqual(before);
    expect(cloud.schemaErrors).toEqual([]);
  });

  it('no reply or outbox row carries a token’s value', () => {
    const payloads = (
      t.gw.db.prepare('SELECT payload FROM outbox').all() as { payload: string }[]
    ).map((r) => r.payload);
    expect(payloads.some((p) => p.includes('token_bind'))).toBe(true);
    for (const p of payloads) expect(p).not.toMatch(/A23B1C|a2:3b|0150A1B2/i);
  });
});
