import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { uuid7 } from '../src/shared/uuid7.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('uuid7 (ledger entry and outbox ids)', () => {
  it('is a version 7, variant 10 UUID carrying its millisecond', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1_700_000_000_000, max: 2_000_000_000_000 }), (ms) => {
        const id = uuid7(ms);
        expect(id).toMatch(V7);
        const stamped = parseInt(id.replace(/-/g, '').slice(0, 12), 16);
        // Never before the asked time; later only when an earlier call already used it.
        expect(stamped).toBeGreaterThanOrEqual(ms);
      }),
    );
  });

  it('sorts in the order it was made, also thousands in one millisecond and when the clock steps back', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -5, max: 3 }), { minLength: 2, maxLength: 6000 }),
        (steps) => {
          let ms = 1_800_000_000_000;
          const ids = steps.map((step) => {
            ms += step;
            return uuid7(ms);
          });
          const sorted = [...ids].sort();
          expect(sorted).toEqual(ids);
          expect(new Set(ids).size).toBe(ids.length);
        },
      ),
      { numRuns: 30 },
    );
  });
});
