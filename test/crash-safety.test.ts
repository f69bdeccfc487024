import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { KILL_POINTS } from '../src/shared/kill-points.js';
import { DRIVERS, testConfig } from './helpers/gateway.js';
import { spawnGateway } from './helpers/gateway-process.js';
import { errorCode } from './helpers/http.js';
import { crashRun, refundPath, type CrashCase, type CrashProtocol } from './helpers/crash-run.js';

/**
 * SIGKILL at every kill point of Start, refund and settlement, restart on the same database, and
 * check the money invariants. `npm test` runs each point once (the protocol alternating, seed 1);
 * `npm run test:crash-sweep` runs every point on both protocols with CRASH_SEEDS seeds (default 5);
 * CRASH_CASE=point:protocol:seed replays one run.
 */
function cases(): CrashCase[] {
  const only = process.env.CRASH_CASE;
  if (only) {
    const [point, protocol, seed] = only.split(':');
    return [{ point, protocol, seed: Number(seed) } as CrashCase];
  }
  if (process.env.CRASH_SWEEP) {
    const seeds = Number(process.env.CRASH_SEEDS ?? 5);
    const protocols: CrashProtocol[] = ['ocpp1.6', 'ocpp2.0.1'];
    return KILL_POINTS.flatMap((point) =>
      protocols.flatMap((protocol) =>
        Array.from({ length: seeds }, (_, i) => ({ point, protocol, seed: i + 1 })),
      ),
    );
  }
  return KILL_POINTS.map((point, i) => ({
    point,
    protocol: i % 2 === 0 ? 'ocpp1.6' : 'ocpp2.0.1',
    seed: 1,
  }));
}

const runs = cases();
const seen = { points: new Set<string>(), seeds: new Set<number>(), protocols: new Set<string>() };

describe('kill points', () => {
  it('a misspelt FLEETGW_KILL_AT stops the gateway at start-up instead of never killing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetgw-killat-'));
    try {
      const configPath = join(dir, 'gateway.yaml');
      writeFileSync(configPath, stringify(testConfig(dir)));
      const lines: string[] = [];
      await expect(
        spawnGateway(configPath, lines, { FLEETGW_KILL_AT: 'settle.comitted' }),
      ).rejects.toThrow(/gateway exited/);
      expect(lines.join('\n')).toContain('FLEETGW_KILL_AT=settle.comitted: not one of');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('crash safety: SIGKILL at every kill point, restart, invariants hold', () => {
  afterAll(() => {
    console.log(
      `crash tests: ${runs.length} runs, ${seen.points.size} kill points × ` +
        `${seen.protocols.size} protocol(s) × seeds ${[...seen.seeds].join(',')}`,
    );
  });

  it.concurrent.each(runs)(
    '$point ($protocol, seed $seed)',
    async (c) => {
      seen.points.add(c.point);
      seen.seeds.add(c.seed);
      seen.protocols.add(c.protocol);
      const r = await crashRun(c);
      const context = `${c.point}:${c.protocol}:${c.seed} (${r.notes.join('; ')})`;

      // The process died where it was told to, not somewhere else …
      expect(r.diedAtPoint, context).toBe(true);
      // … and the world saw what that point means: no answer to a Start that died on its way,
      // the remote start on the wire from the point it is sent.
      const step = KILL_POINTS.indexOf(c.point);
      const diesInRequest =
        c.point.startsWith('start.') ||
        (c.point.startsWith('refund.') && refundPath(c) === 'reject');
      expect(r.firstResponse === 'died', context).toBe(diesInRequest);
      if (c.point.startsWith('start.')) {
        const sent = step >= KILL_POINTS.indexOf('start.remote_start_sent');
        expect(r.remoteStartsBeforeKill, context).toBe(sent ? 1 : 0);
      }
      // Balance = sum of ledger entries, never negative, every session exactly one outcome, …
      expect(
        r.report.checks.filter((ch) => ch.violations.length > 0),
        context,
      ).toEqual([]);
      // … and every session ended (settled or refunded) once the charger had its say.
      for (const s of r.sessions) expect(['settled', 'refunded'], context).toContain(s.state);
      // One Start, one key: never a second debit, whatever was retried.
      expect(r.debits, context).toBeLessThanOrEqual(1);
      expect(r.sessions.length, context).toBe(r.debits);
      // The driver paid exactly the cost of what was settled, and never for energy the charger
      // did not deliver.
      const cost = r.sessions.reduce((sum, s) => sum + (s.cost ?? 0), 0);
      expect(r.balance, context).toBe(DRIVERS.ada.balance - cost);
      for (const s of r.sessions.filter((x) => x.state === 'settled')) {
        expect(s.delivered_wh ?? 0, context).toBeLessThanOrEqual(r.chargerDeliveredWh);
      }
      // The retry with the same key, once everything ended, tells the outcome the ledger holds.
      const session = r.sessions[0];
      if (session) {
        const accepted = session.authorized_at !== null || session.state === 'settled';
        if (accepted) {
          expect(r.finalRetry.status, context).toBe(200);
          expect((r.finalRetry.body as { sessionId: string }).sessionId, context).toBe(session.id);
        } else {
          expect(r.finalRetry.status, context).not.toBe(200);
          expect(['charger_rejected', 'charger_timeout', 'charger_offline']).toContain(
            errorCode(r.finalRetry),
          );
        }
      }
    },
    60_000,
  );
});
