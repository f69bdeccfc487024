import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  generateChargerKey,
  hashPassword,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  verifyPassword,
} from '../src/ocpp/connection/charger-password.js';
import { startTestGateway, type TestGateway, UNPHYSICAL_KW } from './helpers/gateway.js';
import { createOperator, op } from './helpers/operator.js';
import { rawCharger } from './helpers/raw-charger.js';

/** One key for the property runs: generating is cheap, but one is what each property is about. */
const KEY = generateChargerKey();

/** The key with the character at `at` replaced by another base64url character. */
function altered(key: string, at: number, by: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const i = at % key.length;
  const current = alphabet.indexOf(key[i] ?? 'A');
  const next = alphabet[(current + 1 + (by % (alphabet.length - 1))) % alphabet.length] ?? 'A';
  return key.slice(0, i) + next + key.slice(i + 1);
}

describe('generated charger keys', () => {
  it('are 192-bit, fit OCPP basic auth, differ each time, and are stored as an HMAC, not in clear', () => {
    const keys = Array.from({ length: 200 }, () => generateChargerKey());
    expect(new Set(keys.map((k) => k.key)).size).toBe(keys.length);
    for (const { key, hash } of keys) {
      expect(key).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(key.length).toBeGreaterThanOrEqual(PASSWORD_MIN_LENGTH);
      expect(key.length).toBeLessThanOrEqual(PASSWORD_MAX_LENGTH);
      expect(hash).toMatch(/^hmac-sha256\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
      expect(hash).not.toContain(key);
    }
    // Same key, two hashes: each has its own salt.
    expect(new Set(keys.map((k) => k.hash.split('$')[1])).size).toBe(keys.length);
  });

  it('verify as themselves, as a string or as the bytes basic auth carries', async () => {
    expect(await verifyPassword(KEY.key, KEY.hash)).toBe(true);
    expect(await verifyPassword(Buffer.from(KEY.key), KEY.hash)).toBe(true);
  });

  it('refuse every other key of the same length (one character changed anywhere)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat(), fc.nat(), async (at, by) => {
        expect(await verifyPassword(altered(KEY.key, at, by), KEY.hash)).toBe(false);
      }),
    );
  });

  it('refuse any string but the key, whatever its length or content', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 200 }), async (guess) => {
        fc.pre(guess !== KEY.key);
        expect(await verifyPassword(guess, KEY.hash)).toBe(false);
      }),
    );
  });

  it("refuse another key's hash, and a tampered or truncated stored form", async () => {
    const other = generateChargerKey();
    expect(await verifyPassword(KEY.key, other.hash)).toBe(false);
    const [prefix, salt, mac] = KEY.hash.split('$') as [string, string, string];
    expect(await verifyPassword(KEY.key, `${prefix}$${salt}`)).toBe(false);
    expect(await verifyPassword(KEY.key, `${prefix}$${salt}$${mac.slice(4)}`)).toBe(false);
    expect(await verifyPassword(KEY.key, `${prefix}$${other.hash.split('$')[1]}$${mac}`)).toBe(
      false,
    );
    expect(await verifyPassword(KEY.key, `${KEY.hash}$extra`)).toBe(false);
  });

  it('never stand in for scrypt: a chosen password keeps its scrypt hash and is checked by it', async () => {
    const chosen = 'a-chosen-password-01';
    const stored = hashPassword(chosen);
    expect(stored.startsWith('scrypt$')).toBe(true);
    expect(await verifyPassword(chosen, stored)).toBe(true);
    expect(await verifyPassword('a-chosen-password-02', stored)).toBe(false);
    // A key checked against a scrypt hash goes through scrypt, and a chosen password of another
    // length than a key's never matches a key's hash.
    expect(await verifyPassword(chosen, KEY.hash)).toBe(false);
  });
});

describe('a charger configured with a generated key', () => {
  let t: TestGateway;
  const rotated = generateChargerKey();

  beforeAll(async () => {
    t = await startTestGateway({
      ocpp: {
        meterSampleIntervalSeconds: 10,
        callTimeoutSeconds: 2,
        authFailureDelay: { initialMilliseconds: 5, maxMilliseconds: 40 },
      },
      chargers: [
        {
          id: 'CP-KEY',
          passwordHash: KEY.hash,
          connectors: [{ id: '1', tariff: 'dc', maxPowerKw: UNPHYSICAL_KW }],
        },
      ],
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  async function connects(id: string, password: string): Promise<true> {
    const cp = await rawCharger(t.gw.ocppUrl, id, password);
    await cp.close({ code: 1000 });
    return true;
  }

  it('is admitted with its key; a wrong key is refused, throttled and never logged', async () => {
    await expect(connects('CP-KEY', KEY.key)).resolves.toBe(true);
    const before = t.logLines.length;
    const wrong = [altered(KEY.key, 0, 0), altered(KEY.key, 31, 7), rotated.key];
    for (const guess of wrong) {
      await expect(connects('CP-KEY', guess)).rejects.toThrow(/Unauthorized/);
    }
    const delays = t.logLines
      .slice(before)
      .filter((l) => l.includes('ocpp connection refused'))
      .map((l) => (JSON.parse(l) as { delayMs: number }).delayMs);
    expect(delays).toEqual([5, 10, 20]);
    const logged = t.logLines.slice(before).join('\n');
    for (const guess of wrong) expect(logged).not.toContain(guess);
    // A success clears the address's record.
    await expect(connects('CP-KEY', KEY.key)).resolves.toBe(true);
  });

  it('after a rotation without overlap, the old key is refused and the new password admitted; after retirement nothing is', async () => {
    const operator = createOperator(t.gw.db, 'otto', 'operator');
    const res = await op(t.gw.operatorUrl, operator, 'POST', '/chargers/CP-KEY/password', {
      password: 'a-new-chosen-password-1',
      overlapSeconds: 0,
    });
    expect(res.status).toBe(200);
    await expect(connects('CP-KEY', KEY.key)).rejects.toThrow(/Unauthorized/);
    await expect(connects('CP-KEY', 'a-new-chosen-password-1')).resolves.toBe(true);
    const retired = await op(t.gw.operatorUrl, operator, 'POST', '/chargers/CP-KEY/retire');
    expect(retired.status).toBe(200);
    await expect(connects('CP-KEY', 'a-new-chosen-password-1')).rejects.toThrow(/Not Found|404/);
  });
});
