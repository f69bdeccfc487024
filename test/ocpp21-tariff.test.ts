import { describe, expect, it } from 'vitest';
import { beyondRounding } from '../src/charging/station-costs.js';
import { costDown, microNgnPerWh } from '../src/pricing/money.js';
import fc from 'fast-check';
import { launchChromium } from './helpers/browser.js';
import { logIn, shows } from './helpers/console-page.js';
import { op } from './helpers/operator.js';
import {
  ledgerVerifies,
  paidSession21,
  sessionRow21,
  station21,
  station21Site,
  transaction21,
} from './helpers/station21.js';
import { waitUntil } from './helpers/wait.js';

/**
 * The session's tariff on a 2.1 station that computes cost itself (TariffCostCtrlr.Enabled[Tariff]):
 * ChangeTransactionTariff once the transaction is accepted, maxCost in the limit once taken, and
 * the station's running and final cost checked against the gateway's (docs/money.md "The
 * charger's own cost"), never billed.
 */

const site = station21Site();

async function station(o: Parameters<typeof station21>[1] = {}) {
  const s = await site.station(o);
  // The gateway reads whether it computes cost when it configures it, after the boot.
  await waitUntil(() => s.reads.includes('TariffCostCtrlr.Enabled[Tariff]'), 5000, 'cost read');
  return s;
}

/** A 2.1 costDetails: `total` NGN for `energyWh`, as the station computed it. */
function costDetails(total: number, energyWh: number) {
  return {
    totalCost: { currency: 'NGN', typeOfCost: 'NormalCost', total: { exclTax: total } },
    totalUsage: { energy: energyWh, chargingTime: 0, idleTime: 0 },
  };
}

const differences = (sessionId: string) =>
  site.t.gw.db
    .prepare(
      'SELECT kind, energy_wh, station_ngn, gateway_ngn FROM station_cost_differences WHERE session_id = ? ORDER BY id',
    )
    .all(sessionId);

describe('OCPP 2.1: the session tariff on the station', () => {
  it('sends the tariff to a station that computes cost, then maxCost, and records its cost only where it differs', async () => {
    const s = await station({ localCost: true });
    const { sessionId, remote } = await paidSession21(site.t, s);
    const tx = transaction21(s.cp, remote);
    // Not taken yet: the paid energy alone.
    expect((await tx.send(tx.frame('Started', 'RemoteStart', 0))).transactionLimit).toEqual({
      maxEnergy: 2424,
    });
    await waitUntil(() => s.tariffs.length === 1, 5000, 'ChangeTransactionTariff');
    expect(s.tariffs[0]).toEqual({
      transactionId: tx.transactionId,
      tariff: {
        tariffId: expect.stringMatching(/^dc@\d+$/) as unknown,
        currency: 'NGN',
        energy: { prices: [{ priceKwh: 412.5 }] },
      },
    });
    // Taken: the station is prompted for an event, whose answer carries the amount paid.
    await waitUntil(() => s.triggers.length === 1, 5000, 'TriggerMessage');
    expect((await tx.send(tx.frame('Updated', 'Trigger', 0))).transactionLimit).toEqual({
      maxEnergy: 2424,
      maxCost: 1000,
    });
    const limitSet = { transactionLimit: { maxEnergy: 2424, maxCost: 1000 } };
    await tx.send(tx.frame('Updated', 'LimitSet', 0, { info: limitSet }));
    // 1,000 Wh: the gateway's 412 NGN; 413.9 is rounding, 500 is not.
    await tx.send(
      tx.frame('Updated', 'RunningCost', 1000, { costDetails: costDetails(413.9, 1000) }),
    );
    expect(differences(sessionId)).toEqual([]);
    await tx.send(
      tx.frame('Updated', 'RunningCost', 1000, { costDetails: costDetails(500, 1000) }),
    );
    await tx.send(
      tx.frame('Ended', 'EnergyLimitReached', 2424, {
        info: { stoppedReason: 'EnergyLimitReached' },
        costDetails: costDetails(1100, 2424),
      }),
    );
    await waitUntil(() => sessionRow21(site.t, sessionId).state === 'settled', 5000, 'settlement');
    expect(differences(sessionId)).toEqual([
      { kind: 'running', energy_wh: 1000, station_ngn: 500, gateway_ngn: 412 },
      { kind: 'final', energy_wh: 2424, station_ngn: 1100, gateway_ngn: 999 },
    ]);
    // The gateway's figure bills, whatever the station computed.
    expect(sessionRow21(site.t, sessionId)).toMatchObject({
      cost: 999,
      stop_line: 'station_limit',
      stop_line_gap_wh: 0,
    });
    ledgerVerifies(site.t);
    const story = (await op(site.t.gw.operatorUrl, site.operator, 'GET', `/sessions/${sessionId}`))
      .body as {
      stationChecks: { limit: Record<string, unknown>; costDifferences: unknown[] };
    };
    expect(story.stationChecks.limit).toMatchObject({
      confirmedEnergyWh: 2424,
      confirmedCostNgn: 1000,
      tariffStatus: 'Accepted',
    });
    expect(story.stationChecks.costDifferences).toHaveLength(2);

    // The console's session view shows the line, the station's limit and its differing costs.
    const browser = await launchChromium();
    try {
      const page = await logIn(
        await browser.newContext(),
        site.t.gw.operatorUrl,
        'otto',
        site.operator,
      );
      await page.goto(`${site.t.gw.operatorUrl}/console/sessions/${sessionId}`);
      await shows(page.locator('[data-field="stopped-by"]'), "the charger's own limit");
      await shows(page.locator('[data-field="station-limit"]'), 'sent, confirmed');
      await shows(page.locator('[data-field="station-cost"]'), /running: .*; final: /);
    } finally {
      await browser.close();
    }
  });

  it('sends no tariff and no maxCost to a station that does not compute cost', async () => {
    const s = await station({ localCost: false });
    const { remote } = await paidSession21(site.t, s);
    const tx = transaction21(s.cp, remote);
    expect((await tx.send(tx.frame('Started', 'RemoteStart', 0))).transactionLimit).toEqual({
      maxEnergy: 2424,
    });
    // Its next answer still carries the limit: the tariff it was never sent would have come by now.
    expect((await tx.send(tx.frame('Updated', 'MeterValuePeriodic', 10))).transactionLimit).toEqual(
      { maxEnergy: 2424 },
    );
    expect(s.tariffs).toEqual([]);
    await tx.send(tx.frame('Ended', 'StopAuthorized', 20, { info: { stoppedReason: 'Local' } }));
  });

  it('never flags a station that prices the same energy honestly, however it rounds, and flags one beyond the tolerance', () => {
    const price = fc
      .integer({ min: 1, max: 2_000_000 })
      .map((milli) => microNgnPerWh(milli / 1000));
    const rounding = fc.constantFrom(
      (x: number) => x,
      (x: number) => Math.round(x * 100) / 100,
      Math.floor,
      Math.ceil,
      Math.round,
    );
    fc.assert(
      fc.property(
        price,
        fc.integer({ min: 0, max: 1_000_000 }),
        // The station's energy in decimal Wh, within a Wh of the gateway's whole Wh.
        fc.double({ min: -0.999, max: 0.999, noNaN: true }),
        rounding,
        (micro, wh, e, round) => {
          const station = round((Math.max(0, wh + e) * micro) / 1_000_000);
          return !beyondRounding(station, costDown(wh, micro), micro);
        },
      ),
    );
    fc.assert(
      fc.property(
        price,
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.double({ min: 0.001, max: 1_000, noNaN: true }),
        fc.boolean(),
        (micro, wh, beyond, above) => {
          const gateway = costDown(wh, micro);
          const off = 2 + micro / 1_000_000 + beyond;
          return beyondRounding(gateway + (above ? off : -off), gateway, micro);
        },
      ),
    );
  });
});
