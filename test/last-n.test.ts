import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LastN } from '../src/shared/last-n.js';

describe('LastN, the ring behind recent calls and live meter samples', () => {
  it('holds exactly the last `capacity` items pushed, oldest first, for every sequence', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.integer(), { maxLength: 40 }),
        (capacity, items) => {
          const ring = new LastN<number>(capacity);
          items.forEach((item, i) => {
            ring.push(item);
            expect(ring.oldestFirst()).toEqual(items.slice(0, i + 1).slice(-capacity));
          });
          expect(ring.oldestFirst()).toEqual(items.slice(-capacity));
        },
      ),
    );
  });

  it('hands out a copy: changing it changes nothing held', () => {
    const ring = new LastN<number>(2);
    ring.push(1);
    ring.oldestFirst().push(99);
    expect(ring.oldestFirst()).toEqual([1]);
  });
});
