import { randomFillSync } from 'node:crypto';

/**
 * UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then a 12-bit counter that keeps ids made in
 * the same millisecond in order (method 1 of §6.2), then 62 random bits. Ids of ledger entries
 * and outbox rows sit in UNIQUE indexes: a random (v4) id lands each insert on a random leaf page,
 * which the commit must write out again; ids in time order append to the index's last page.
 * Still a UUID, still unique and unguessable enough for an id (not for a secret: tokens and keys
 * stay fully random).
 */
let lastMs = 0;
let counter = 0;
const pool = Buffer.alloc(8 * 256);
let poolAt = pool.length;

function random8(): Buffer {
  if (poolAt >= pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const out = pool.subarray(poolAt, poolAt + 8);
  poolAt += 8;
  return out;
}

export function uuid7(nowMs: number = Date.now()): string {
  let ms = Math.max(nowMs, lastMs);
  if (ms === lastMs) {
    counter++;
    if (counter > 0xfff) {
      // 4,096 ids in one millisecond: borrow the next one, as §6.2 allows.
      ms++;
      counter = 0;
    }
  } else {
    counter = 0;
  }
  lastMs = ms;
  const b = Buffer.alloc(16);
  b.writeUIntBE(ms, 0, 6);
  b[6] = 0x70 | (counter >> 8);
  b[7] = counter & 0xff;
  const r = random8();
  r.copy(b, 8);
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
