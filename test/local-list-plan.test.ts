import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LocalAuthList } from '../simulators/shared/local-list.js';
import {
  applied,
  fitToList,
  planUpdates,
  type KeyedEntry,
  type ListLimits,
} from '../src/charging/local-lists/list-plan.js';

const entry = fc.record({
  key: fc.constantFrom(...'ABCDEFGHIJKLMNOP'.split('').map((c) => `04${c}${c}${c}`)),
  status: fc.constantFrom<'accepted' | 'blocked'>('accepted', 'blocked'),
  expiresAt: fc.option(fc.constantFrom('2030-01-01T00:00:00.000Z', '2031-06-01T12:00:00.000Z'), {
    nil: null,
  }),
  // The value as bound: the key's case or separators may differ.
  form: fc.constantFrom('same', 'lower', 'colons'),
});

function toEntry(e: {
  key: string;
  status: 'accepted' | 'blocked';
  expiresAt: string | null;
  form: string;
}): KeyedEntry {
  const value =
    e.form === 'lower'
      ? e.key.toLowerCase()
      : e.form === 'colons'
        ? e.key.match(/../g)!.join(':')
        : e.key;
  return { key: e.key, value, type: 'ISO14443', status: e.status, expiresAt: e.expiresAt };
}

const list = fc
  .uniqueArray(entry, { selector: (e) => e.key, maxLength: 16 })
  .map((es) => es.map(toEntry));

const limits = fc.record({
  maxEntries: fc.integer({ min: 1, max: 20 }),
  maxTokenLength: fc.constantFrom(20, 36),
  itemsPerMessage: fc.integer({ min: 1, max: 6 }),
  bytesPerMessage: fc.option(fc.integer({ min: 300, max: 1200 }), { nil: null }),
});

const byKey = (es: readonly KeyedEntry[]) => new Map(es.map((e) => [e.key, e]));

describe('local list plans', () => {
  it('bring any list the charger holds to the wanted one, within its bounds, on a firmware list too', () => {
    fc.assert(
      fc.property(
        fc.option(list, { nil: null }),
        list,
        limits,
        (heldList, wanted, l: ListLimits) => {
          const { entries: target } = fitToList(wanted, l);
          expect(target.length).toBeLessThanOrEqual(l.maxEntries);
          const held = heldList === null ? null : byKey(fitToList(heldList, l).entries);
          const plan = planUpdates(held, target, l);
          // The firmware's own list, as the simulators keep it, given the same messages.
          const firmware = new LocalAuthList(l.maxEntries);
          let version = 0;
          if (held !== null) {
            firmware.apply(
              'Full',
              ++version,
              [...held.values()].map((e) => ({ token: e.value, status: e.status })),
            );
          }
          let books = held ?? new Map<string, KeyedEntry>();
          for (const update of plan) {
            expect(update.put.length + update.remove.length).toBeLessThanOrEqual(l.itemsPerMessage);
            books = applied(books, update);
            const status = firmware.apply(
              update.kind === 'full' ? 'Full' : 'Differential',
              ++version,
              [
                ...update.remove.map((e) => ({ token: e.value })),
                ...update.put.map((e) => ({
                  token: e.value,
                  status: e.status,
                  ...(e.expiresAt ? { expiresAt: e.expiresAt } : {}),
                })),
              ],
            );
            expect(status).toBe('Accepted');
          }
          expect([...books.values()].sort((a, b) => a.key.localeCompare(b.key))).toEqual(
            [...target].sort((a, b) => a.key.localeCompare(b.key)),
          );
          const onCharger = firmware
            .snapshot()
            .map((e) => [e.token, e.status])
            .sort();
          expect(onCharger).toEqual(
            target.map((e) => [e.value, e.status === 'accepted' ? 'accepted' : 'blocked']).sort(),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('send nothing when the charger holds the list already', () => {
    fc.assert(
      fc.property(list, limits, (wanted, l: ListLimits) => {
        const { entries } = fitToList(wanted, l);
        expect(planUpdates(byKey(entries), entries, l)).toEqual([]);
      }),
    );
  });

  it('keep Accepted tokens before Blocked ones when the list is too small, and leave out tokens the protocol cannot say', () => {
    const long = {
      key: 'X'.repeat(24),
      value: 'X'.repeat(24),
      type: 'ISO15693',
      status: 'accepted' as const,
      expiresAt: null,
    };
    const a = {
      key: '04AA',
      value: '04AA',
      type: 'ISO14443',
      status: 'accepted' as const,
      expiresAt: null,
    };
    const b = {
      key: '04BB',
      value: '04BB',
      type: 'ISO14443',
      status: 'blocked' as const,
      expiresAt: null,
    };
    const l = { maxEntries: 1, maxTokenLength: 20, itemsPerMessage: 10, bytesPerMessage: null };
    expect(fitToList([b, long, a], l)).toEqual({ entries: [a], left: 2 });
    expect(fitToList([b, long, a], { ...l, maxEntries: 5, maxTokenLength: 36 }).entries).toEqual([
      a,
      long,
      b,
    ]);
  });
});
