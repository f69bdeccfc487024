import { describe, expect, it } from 'vitest';
import { DRIVERS } from './helpers/gateway.js';
import { raw16, raw201 } from './helpers/raw-stations.js';
import { MOMENTS, TOP_UP, powerCutRun, type Facts } from './power-cut/run.js';

/**
 * docs/money.md, "What is fsynced before each answer", under power cuts: the gateway's data folder
 * on powercut-fs (test/power-cut/), a paid session cut (SIGKILL, then every unsynced write dropped)
 * right after each moment the world is told something, on both protocols; the image the cut left
 * must hold every promise told before it, and the gateway restarted on it must end the session
 * with the ledger sound.
 */

const runs = [raw16, raw201].flatMap((protocol) =>
  MOMENTS.map((moment) => ({ protocol, moment, name: protocol.name })),
);

/**
 * Runs at a time: each is two gateway processes, a broker and a file system in turn, and a
 * loaded 2-core machine starts a gateway in seconds; more at once only queue on the CPU.
 */
const AT_ONCE = 2;
let running = 0;
const queue: (() => void)[] = [];
async function limited<T>(run: () => Promise<T>): Promise<T> {
  if (running >= AT_ONCE) await new Promise<void>((r) => queue.push(r));
  running++;
  try {
    return await run();
  } finally {
    running--;
    queue.shift()?.();
  }
}

function sessionOf(f: Facts, id: string) {
  return f.sessions.find((s) => s.id === id);
}

function entry(f: Facts, kind: string, sessionId: string) {
  return f.entries.find((e) => e.kind === kind && e.session_id === sessionId);
}

/** The states the session's outbox rows carry to the cloud. */
function toldUpstream(f: Facts, sessionId: string): string[] {
  return f.published.get(sessionId) ?? [];
}

describe('power cuts: every promise of docs/money.md survives a cut right after it is told', () => {
  it.concurrent.each(runs)(
    'cut after "$moment" ($name)',
    async ({ protocol, moment }) => {
      const r = await limited(() => powerCutRun(protocol, moment));
      const context = `${protocol.name}, cut after ${moment} (${r.notes.join('; ')})`;
      const { told, image } = r;

      // What survived is a sound ledger: balances are their entries' sums, every open session
      // holds its debit, nothing in part.
      expect(
        image.report.checks.filter((c) => c.violations.length > 0),
        context,
      ).toEqual([]);

      // The cloud never saw a row a cut took back, nor a seq the next process could give again.
      for (const m of told.published) {
        expect(image.outbox.get(m.seq), `${context}: ${m.kind} seq ${m.seq}`).toBe(m.id);
      }

      // A top-up the cloud heard applied is in the ledger.
      if (told.topUp) {
        expect(
          image.entries.filter((e) => e.kind === 'top_up'),
          context,
        ).toEqual([
          {
            kind: 'top_up',
            amount: told.topUp.amount,
            session_id: null,
            reference: told.topUp.reference,
          },
        ]);
      }

      // A Start refused after its debit: the refund, whole, with its outbox row.
      if (told.refused) {
        const refused = image.sessions.find((s) => s.connector_id === '2');
        expect(refused?.state, context).toBe('refunded');
        const id = refused?.id ?? '';
        expect(entry(image, 'session_debit', id)?.amount, context).toBe(-told.refused.amount);
        expect(entry(image, 'session_refund', id)?.amount, context).toBe(told.refused.amount);
        expect(toldUpstream(image, id), context).toContain('refunded');
      }

      // A Start answered 200 is debited: its session, its debit, its Idempotency-Key and its
      // `authorizing` row for the cloud.
      if (told.start) {
        const { sessionId, debited } = told.start;
        const session = sessionOf(image, sessionId);
        expect(session, context).toBeDefined();
        expect(entry(image, 'session_debit', sessionId)?.amount, context).toBe(-debited);
        expect(image.keys, context).toContainEqual({
          key: expect.any(String),
          session_id: sessionId,
        });
        expect(toldUpstream(image, sessionId), context).toContain('authorizing');

        // The charger's transaction start answered: the transaction it was given, charging.
        if (told.transaction) {
          expect(session?.transaction_ref, context).toBe(told.transaction.ref);
          expect(['charging', 'stopping', 'settled'], context).toContain(session?.state);
          expect(toldUpstream(image, sessionId), context).toContain('charging');
        }
        // The sample at the paid energy answered: the stop is asked for (its outbox row synced).
        if (told.paidEnergyReached) {
          expect(['stopping', 'settled'], context).toContain(session?.state);
          expect(toldUpstream(image, sessionId), context).toContain('stopping');
        }
        // The stop answered, or the settlement published or read: settled, with its credit,
        // exactly as it stays.
        if (told.stop || told.settlementPublished || told.settlementRead) {
          expect(session?.state, context).toBe('settled');
          expect(entry(image, 'session_credit', sessionId)?.amount, context).toBe(
            session?.credited,
          );
          expect(toldUpstream(image, sessionId), context).toContain('settled');
          expect(session, context).toEqual(sessionOf(r.final, sessionId));
        }
      }

      // The gateway restarted on what the cut left ends the session once, the ledger sound.
      const { final } = r;
      expect(
        final.report.checks.filter((c) => c.violations.length > 0),
        context,
      ).toEqual([]);
      // One session per Start: the refused one refunded, the paid one settled on what the
      // charger's register moved.
      expect(
        final.sessions.map((s) => [s.connector_id, s.state]),
        context,
      ).toEqual([
        ['2', 'refunded'],
        ['1', 'settled'],
      ]);
      const session = final.sessions[1];
      expect(session?.delivered_wh, context).toBe(r.deliveredWh);
      expect(
        final.entries.filter((e) => e.kind === 'session_debit'),
        context,
      ).toHaveLength(2);
      expect(final.balance, context).toBe(DRIVERS.ada.balance + TOP_UP - (session?.cost ?? 0));
      // The app's retry with the Start's key, once it ended, hears the same session.
      expect(r.retry.status, context).toBe(200);
      expect((r.retry.body as { sessionId: string }).sessionId, context).toBe(session?.id);
    },
    600_000,
  );
});
