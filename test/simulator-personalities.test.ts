import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Personality } from '../simulators/shared/personalities.js';
import { WireQuirks } from '../simulators/shared/wire-quirks.js';

// What each firmware personality puts on the wire, frame by frame. The simulators' behaviour
// (stops, profiles, reboots, local starts) is tested in simulator-ocpp16/201 and end to end.

const AT = '2026-11-24T01:02:03.456Z';

function quirks(protocol: 'ocpp1.6' | 'ocpp2.0.1', ...names: string[]): WireQuirks {
  return new WireQuirks(protocol, Personality.parse(names, protocol), 'FleetSim');
}

function meter16(registerWh: number, transactionId: number | null = 7) {
  return {
    connectorId: 1,
    ...(transactionId === null ? {} : { transactionId }),
    meterValue: [
      {
        timestamp: AT,
        sampledValue: [
          {
            value: String(registerWh),
            context: 'Sample.Periodic',
            measurand: 'Energy.Active.Import.Register',
            unit: 'Wh',
          },
          {
            value: '150000',
            context: 'Sample.Periodic',
            measurand: 'Power.Active.Import',
            unit: 'W',
          },
          {
            value: '42',
            context: 'Sample.Periodic',
            measurand: 'SoC',
            location: 'EV',
            unit: 'Percent',
          },
        ],
      },
    ],
  };
}

type Sampled = { value: unknown; measurand?: string; unit?: string; phase?: string };
function samples(frame: object): Sampled[] {
  return (frame as { meterValue: { sampledValue: Sampled[] }[] }).meterValue[0]?.sampledValue ?? [];
}

describe('personality names', () => {
  it('parses lists and values, and refuses unknown, foreign and conflicting ones', () => {
    const p = Personality.parse(['numeric-values,clock-skew=-5', 'local-start=CARD-9'], 'ocpp1.6');
    expect(p.list).toEqual(['numeric-values', 'clock-skew', 'local-start']);
    expect(p.clockSkewMs).toBe(-5 * 3_600_000);
    expect(p.localIdTag).toBe('CARD-9');
    expect(Personality.parse(['clock-skew'], 'ocpp2.0.1').clockSkewMs).toBe(2 * 3_600_000);
    expect(() => Personality.parse(['fast-charging'], 'ocpp1.6')).toThrow(/unknown personality/);
    expect(() => Personality.parse(['no-txid-meter'], 'ocpp2.0.1')).toThrow(/ocpp1.6 only/);
    expect(() => Personality.parse(['ignores-stop,rejects-stop'], 'ocpp1.6')).toThrow(/conflict/);
    expect(() => Personality.parse(['numeric-values=3'], 'ocpp1.6')).toThrow(/takes no value/);
  });

  it('leaves a well-behaved charger untouched', () => {
    const frame = meter16(1000);
    expect(quirks('ocpp1.6').request('MeterValues', frame)).toBe(frame);
  });
});

describe('OCPP 1.6 frames', () => {
  it('numeric-values and lowercase-units: numbers and wh, kWh register in kwh', () => {
    const sent = samples(
      quirks('ocpp1.6', 'numeric-values', 'lowercase-units').request('MeterValues', meter16(1234)),
    );
    expect(sent[0]).toMatchObject({ value: 1234, unit: 'wh' });
    expect(sent[1]).toMatchObject({ value: 150000, unit: 'w' });
    expect(sent[2]).toMatchObject({ value: 42, unit: 'Percent' });
    const kwh = samples(
      quirks('ocpp1.6', 'kwh-register', 'lowercase-units').request('MeterValues', meter16(1234)),
    );
    expect(kwh[0]).toMatchObject({ value: '1.234', unit: 'kwh' });
  });

  it('no-txid-meter and connector-zero-meter move transaction samples off the transaction', () => {
    const sent = quirks('ocpp1.6', 'no-txid-meter', 'connector-zero-meter').request(
      'MeterValues',
      meter16(5),
    );
    expect(sent).toMatchObject({ connectorId: 0 });
    expect(sent).not.toHaveProperty('transactionId');
    // Samples outside a transaction stay where they are.
    expect(
      quirks('ocpp1.6', 'connector-zero-meter').request('MeterValues', meter16(5, null)),
    ).toMatchObject({
      connectorId: 1,
    });
  });

  it('no-meter-start, vendor-stop-reason, vendor-fields, clock-skew, no-millis-timestamps', () => {
    const q = quirks(
      'ocpp1.6',
      'no-meter-start',
      'vendor-stop-reason',
      'vendor-fields',
      'clock-skew=-1',
      'no-millis-timestamps',
    );
    expect(
      q.request('StartTransaction', { connectorId: 1, idTag: 'A', meterStart: 900, timestamp: AT }),
    ).toEqual({
      connectorId: 1,
      idTag: 'A',
      meterStart: 0,
      timestamp: '2026-11-24T00:02:03Z',
      vendorExtension: { vendor: 'FleetSim', build: '4.2.1-r7' },
    });
    const stop = q.request('StopTransaction', {
      transactionId: 7,
      meterStop: 2000,
      timestamp: AT,
      reason: 'Remote',
    });
    expect(stop).toMatchObject({ reason: 'RemoteStopRequest', timestamp: '2026-11-24T00:02:03Z' });
    expect(q.result('RemoteStopTransaction', { status: 'Accepted' })).toEqual({
      status: 'Accepted',
      vendorExtension: { vendor: 'FleetSim' },
    });
  });

  it('no-energy: samples during the transaction carry power and SoC but no energy', () => {
    const sent = samples(quirks('ocpp1.6', 'no-energy').request('MeterValues', meter16(1234)));
    expect(sent.map((s) => s.measurand)).toEqual(['Power.Active.Import', 'SoC']);
  });

  it('per-phase and interval-energy add up to exactly what the register moved', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1e9 }),
        fc.array(fc.integer({ min: 0, max: 100_000 }), { minLength: 1, maxLength: 8 }),
        (meterStart, steps) => {
          const q = quirks('ocpp1.6', 'interval-energy', 'per-phase');
          q.request('StartTransaction', { connectorId: 1, idTag: 'A', meterStart, timestamp: AT });
          let register = meterStart;
          let summed = 0;
          for (const step of steps) {
            register += step;
            const energy = samples(q.request('MeterValues', meter16(register))).filter(
              (s) => s.measurand === 'Energy.Active.Import.Interval',
            );
            expect(energy.map((s) => s.phase)).toEqual(['L1', 'L2', 'L3']);
            summed += energy.reduce((sum, s) => sum + Number(s.value), 0);
          }
          expect(summed).toBe(register - meterStart);
        },
      ),
    );
  });
});

describe('OCPP 2.0.1 frames', () => {
  const event = (eventType: string, registerWh: number | undefined, extra: object = {}) => ({
    eventType,
    timestamp: AT,
    triggerReason: 'MeterValuePeriodic',
    seqNo: 0,
    transactionInfo: { transactionId: 'tx-1', ...extra },
    ...(registerWh === undefined
      ? {}
      : {
          meterValue: [
            {
              timestamp: AT,
              sampledValue: [
                {
                  value: registerWh,
                  context: eventType === 'Started' ? 'Transaction.Begin' : 'Sample.Periodic',
                  measurand: 'Energy.Active.Import.Register',
                  unitOfMeasure: { unit: 'Wh' },
                },
              ],
            },
          ],
        }),
  });

  it('kwh-register and lowercase-units spell the unit in unitOfMeasure', () => {
    const sent = samples(
      quirks('ocpp2.0.1', 'kwh-register', 'lowercase-units').request(
        'TransactionEvent',
        event('Updated', 1500),
      ),
    );
    expect(sent[0]).toMatchObject({ value: 1.5, unitOfMeasure: { unit: 'kwh' } });
  });

  it('interval-energy counts from the Started register; no-meter-start drops it', () => {
    const q = quirks('ocpp2.0.1', 'interval-energy');
    expect(samples(q.request('TransactionEvent', event('Started', 1000)))[0]).toMatchObject({
      measurand: 'Energy.Active.Import.Interval',
      value: 0,
    });
    expect(samples(q.request('TransactionEvent', event('Updated', 1400)))[0]).toMatchObject({
      value: 400,
    });
    expect(q.request('TransactionEvent', event('Started', 1000, {}))).toHaveProperty('meterValue');
    expect(
      quirks('ocpp2.0.1', 'no-meter-start').request('TransactionEvent', event('Started', 1000)),
    ).not.toHaveProperty('meterValue');
  });

  it('vendor-stop-reason renames the stoppedReason', () => {
    const sent = quirks('ocpp2.0.1', 'vendor-stop-reason').request(
      'TransactionEvent',
      event('Ended', 2000, { stoppedReason: 'EVDisconnected' }),
    );
    expect(sent).toMatchObject({ transactionInfo: { stoppedReason: 'EVUnplugged' } });
  });
});
