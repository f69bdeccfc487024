import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applySeed } from '../src/cli/offline/seed.js';
import { IdTokenStore, TokenBoundElsewhereError } from '../src/id-tokens/id-token-store.js';
import { boundTokenKey, maskToken } from '../src/id-tokens/token-key.js';
import { openDatabase, type Db } from '../src/store/database.js';
import { DRIVERS, testSeed } from './helpers/gateway.js';

const at = '2026-12-06T10:00:00.000Z';
const asciiOnly = (s: string) => [...s].filter((c) => c.charCodeAt(0) < 128).join('');

describe('a bound token key', () => {
  it('meets every form a reader writes one card UID in', () => {
    const forms = [
      '04A23B1C',
      '04a23b1c',
      '04:A2:3B:1C',
      '04-a2-3b-1c',
      '04 A2 3B 1C',
      '0004A23B1C',
      '000000000004A23B1C  ',
      '\u000004A23B1C\u0000',
    ];
    expect(new Set(forms.map(boundTokenKey))).toEqual(new Set(['4A23B1C']));
  });

  it('meets a vehicle as a 1.6 VID: idTag and as a 2.0.1 MacAddress', () => {
    expect(boundTokenKey('VID:0023A7F1C2D4')).toBe(boundTokenKey('00:23:a7:f1:c2:d4'));
  });

  it('folds only ASCII letters and keeps other tokens whole', () => {
    expect(boundTokenKey('driver-ada')).toBe('DRIVER-ADA');
    expect(boundTokenKey('ß-card')).toBe('ß-CARD');
    expect(boundTokenKey('0012')).toBe('0012'); // a key code, not a UID: its zeros count
  });

  it('is idempotent and case-blind for every token', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 36 }), (raw) => {
        const key = boundTokenKey(raw);
        expect(boundTokenKey(key)).toBe(key);
        expect(boundTokenKey(asciiOnly(raw.toLowerCase()))).toBe(
          boundTokenKey(asciiOnly(raw.toUpperCase())),
        );
      }),
    );
  });

  it('masks all but the last four characters', () => {
    expect(maskToken('4A23B1C')).toBe('•••3B1C');
    expect(maskToken('4A23B1C')).not.toContain('4A2');
  });
});

describe('the id token store', () => {
  let dir: string;
  let db: Db;
  let tokens: IdTokenStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fleetgw-idtokens-'));
    db = openDatabase(join(dir, 't.db'));
    applySeed(db, testSeed, at);
    tokens = new IdTokenStore(db);
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const card = (driverId: string, value: string) =>
    ({ driverId, kind: 'card', type: 'ISO14443', value, source: 'operator' }) as const;

  it('binds a card once: the same driver again updates it, another driver is refused', () => {
    const first = tokens.bind(card(DRIVERS.ada.id, '04:A2:3B:1C'), at);
    const again = tokens.bind({ ...card(DRIVERS.ada.id, '04a23b1c'), label: 'blue' }, at);
    expect(again.id).toBe(first.id);
    expect(again.label).toBe('blue');
    expect(() => tokens.bind(card(DRIVERS.bola.id, '0004A23B1C'), at)).toThrow(
      TokenBoundElsewhereError,
    );
  });

  it('the schema refuses a second binding of one key, whatever the code does', () => {
    tokens.bind(card(DRIVERS.ada.id, '04A23B1C'), at);
    expect(() =>
      db
        .prepare(
          `INSERT INTO id_tokens (id, driver_id, kind, token_type, token_value, token_key, source, created_at, updated_at)
           VALUES ('tok_x', ?, 'card', 'ISO14443', '4A23B1C', '4A23B1C', 'operator', ?, ?)`,
        )
        .run(DRIVERS.bola.id, at, at),
    ).toThrow(/UNIQUE/);
  });

  it('judges blocked, expired, unknown and unbound tokens', () => {
    const t = tokens.bind(
      { ...card(DRIVERS.ada.id, '11223344'), expiresAt: '2026-12-07T00:00:00.000Z' },
      at,
    );
    const now = Date.parse(at);
    expect(tokens.judge('11:22:33:44', now).status).toBe('accepted');
    expect(tokens.judge('11223344', Date.parse('2026-12-08T00:00:00.000Z')).status).toBe('expired');
    tokens.setBlocked(t.id, 'lost card', at);
    expect(tokens.judge('11223344', now).status).toBe('blocked');
    expect(tokens.judge('99887766', now).status).toBe('unknown');
    expect(tokens.unbind(t.id, at)).toBe(true);
    expect(tokens.judge('11223344', now).status).toBe('unknown');
    expect(() => db.prepare('DELETE FROM id_tokens').run()).toThrow(/never deleted/);
    // Unbound, it may be bound again, to anyone.
    expect(tokens.bind(card(DRIVERS.bola.id, '11223344'), at).driverId).toBe(DRIVERS.bola.id);
  });
});
