import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { Alert } from '../src/alerts/alert.js';
import { AlertStore } from '../src/alerts/alert-store.js';
import { AlertWatch } from '../src/alerts/alert-watch.js';
import { createLogger } from '../src/shared/log.js';
import { openDatabase } from '../src/store/database.js';
import { Outbox } from '../src/store/outbox.js';

const RAISE_MS = 1000;
const CLEAR_MS = 2000;

const dir = mkdtempSync(join(tmpdir(), 'fleetgw-alert-watch-'));
// One database for every run (each has its own subject): migrating a new file per run is slow.
const db = openDatabase(join(dir, 'watch.db'));
afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const open = (a: Alert) => a.clearedAt === null;

/**
 * The no-storm rule (docs/alerts.md) for any pattern of a condition coming and going: raised only
 * after it held RAISE_MS, cleared only after it was gone CLEAR_MS, raises and clears alternate,
 * so two raises are at least RAISE_MS + CLEAR_MS apart however fast the condition flaps.
 */
describe('alert watch: raised once, cleared once', () => {
  let run = 0;
  it('holds for every sequence of checks', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ holds: fc.boolean(), afterMs: fc.integer({ min: 0, max: 3000 }) }), {
          minLength: 1,
          maxLength: 60,
        }),
        (checks) => {
          const r = run++;
          const subject = `outbox-${r}`;
          {
            // Each run later than the last: the newest alerts in the shared table are this run's.
            let now = Date.parse('2026-11-27T00:00:00.000Z') + r * 1e9;
            let holds = false;
            const store = new AlertStore(db, new Outbox(db), 'site', false);
            const mine = (st: AlertStore) =>
              st.list('all', 500).filter((a) => a.subject === subject);
            const watch = new AlertWatch({
              db,
              store,
              clock: { now: () => now },
              log: createLogger('silent'),
              checkMs: 1000,
              raiseAfterMs: () => RAISE_MS,
              clearAfterMs: CLEAR_MS,
              observe: () => (holds ? [{ kind: 'outbox_backlog', subject, detail: {} }] : []),
              stopEscalated: false,
              operatorLossWh: null,
            });
            // When the condition last started holding, and last stopped, as the checks saw it.
            let heldFrom: number | null = null;
            let goneFrom: number | null = null;
            for (const c of checks) {
              now += c.afterMs;
              holds = c.holds;
              if (holds) {
                heldFrom ??= now;
                goneFrom = null;
              } else {
                goneFrom ??= now;
                heldFrom = null;
              }
              const before = mine(store);
              watch.check();
              const after = mine(store);
              const raised = after.length > before.length;
              const cleared = after.some(
                (a) =>
                  a.clearedAt !== null && before.find((b) => b.id === a.id)?.clearedAt === null,
              );
              if (raised)
                expect(holds && now - (heldFrom as number)).toBeGreaterThanOrEqual(RAISE_MS);
              if (cleared)
                expect(!holds && now - (goneFrom as number)).toBeGreaterThanOrEqual(CLEAR_MS);
              // Held long enough with none open: raised now; gone long enough: none left open.
              if (holds && now - (heldFrom as number) >= RAISE_MS)
                expect(mine(store).filter(open)).toHaveLength(1);
              if (!holds && now - (goneFrom as number) >= CLEAR_MS)
                expect(mine(store).filter(open)).toHaveLength(0);
            }
            const alerts = mine(store).reverse();
            for (let i = 1; i < alerts.length; i++) {
              const gap = Date.parse(alerts[i]!.raisedAt) - Date.parse(alerts[i - 1]!.raisedAt);
              expect(gap).toBeGreaterThanOrEqual(RAISE_MS + CLEAR_MS);
            }
            // Every raise and every clear is one event on the outbox, in that order.
            const events = db
              .prepare("SELECT payload FROM outbox WHERE topic = 'alerts' ORDER BY seq")
              .all() as { payload: string }[];
            const types = events
              .map((e) => JSON.parse(e.payload) as { type: string; alert: { subject: string } })
              .filter((e) => e.alert.subject === subject)
              .map((e) => e.type);
            const expected = alerts.flatMap((a) =>
              a.clearedAt === null ? ['alert.raised'] : ['alert.raised', 'alert.cleared'],
            );
            expect(types).toEqual(expected);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
