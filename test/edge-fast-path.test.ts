import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { takenAsSent, type FrameNormalizer } from '../src/ocpp/connection/edge.js';
import { normalize16 } from '../src/ocpp/v16/normalize.js';
import { normalize201 } from '../src/ocpp/v201/normalize.js';

/**
 * Each message comes from one of two variants: `strict`, spelled as the schema wants it (what a
 * conforming charger sends, so the taken branch is met in every run, not by luck), or `loose`,
 * with the deviations field chargers send mixed in (so the repair branch is met too).
 */
type Variant = 'strict' | 'loose';

/** Spellings of an instant as chargers send them: canonical, and the others the repair rewrites. */
const looseTimestamp = fc
  .tuple(
    fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z') }),
    // Mostly canonical, as conforming chargers send it, so that both branches are met often.
    fc.oneof(
      { arbitrary: fc.constant('canonical'), weight: 12 },
      fc.constantFrom('seconds', 'offset', 'no-zone', 'lower-z', 'garbage'),
    ),
  )
  .map(([d, style]) => {
    const iso = Number.isNaN(d.getTime()) ? '2026-01-01T00:00:00.000Z' : d.toISOString();
    switch (style) {
      case 'canonical':
        return iso;
      case 'seconds':
        return iso.replace(/\.\d{3}Z$/, 'Z');
      case 'offset':
        return iso.replace('Z', '+00:00');
      case 'no-zone':
        return iso.replace('Z', '');
      case 'lower-z':
        return iso.replace('Z', 'z');
      default:
        return 'yesterday';
    }
  });
const strictTimestamp = fc
  .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z') })
  .map((d) => (Number.isNaN(d.getTime()) ? '2026-01-01T00:00:00.000Z' : d.toISOString()));
const timestampOf = (v: Variant) => (v === 'strict' ? strictTimestamp : looseTimestamp);

/** A value as the schema wants it, or as field chargers send it instead. */
const anyCase = (values: string[], v: Variant = 'loose') =>
  v === 'strict'
    ? fc.constantFrom(...values)
    : fc
        .tuple(
          fc.constantFrom(...values),
          fc.oneof(
            { arbitrary: fc.constant('as-is'), weight: 8 },
            fc.constantFrom('lower', 'upper'),
          ),
        )
        .map(([v, c]) => (c === 'lower' ? v.toLowerCase() : c === 'upper' ? v.toUpperCase() : v));

const meterValues16Of = (v: Variant) =>
  fc.record(
    {
      connectorId:
        v === 'strict' ? fc.nat(4) : fc.oneof(fc.nat(4), fc.constant(1.5), fc.constant('1')),
      transactionId: fc.integer({ min: 1, max: 1_000_000 }),
      meterValue: fc.array(
        fc.record({
          timestamp: timestampOf(v),
          sampledValue: fc.array(
            fc.record(
              {
                value:
                  v === 'strict' ? fc.nat().map(String) : fc.oneof(fc.nat().map(String), fc.nat()),
                measurand: anyCase(
                  ['Energy.Active.Import.Register', 'Power.Active.Import', 'SoC'],
                  v,
                ),
                unit: anyCase(['Wh', 'kWh', 'W', 'Percent'], v),
                context:
                  v === 'strict'
                    ? fc.constantFrom('Sample.Periodic', 'Transaction.Begin')
                    : fc.constantFrom('Sample.Periodic', 'Transaction.Begin', null),
                ...(v === 'strict' ? {} : { vendorField: fc.string() }),
              },
              { requiredKeys: ['value'] },
            ),
            { minLength: 1, maxLength: 3 },
          ),
        }),
        { minLength: 1, maxLength: 3 },
      ),
    },
    { requiredKeys: ['connectorId', 'meterValue'] },
  );

const status16Of = (v: Variant) =>
  fc.record(
    {
      connectorId: fc.nat(4),
      errorCode: anyCase(['NoError', 'GroundFailure', 'OtherError'], v),
      status: anyCase(['Available', 'Charging', 'Faulted'], v),
      timestamp: timestampOf(v),
      info: fc.string({ maxLength: 50 }),
    },
    { requiredKeys: ['connectorId', 'errorCode', 'status'] },
  );

const transactionEvent201Of = (v: Variant) =>
  fc.record(
    {
      eventType: anyCase(['Started', 'Updated', 'Ended'], v),
      timestamp: timestampOf(v),
      triggerReason: anyCase(['MeterValuePeriodic', 'Authorized', 'EVDeparted'], v),
      seqNo: v === 'strict' ? fc.nat(1000) : fc.oneof(fc.nat(1000), fc.constant('3')),
      transactionInfo: fc.record({ transactionId: fc.string({ minLength: 1, maxLength: 36 }) }),
      meterValue: fc.array(
        fc.record({
          timestamp: timestampOf(v),
          sampledValue: fc.array(
            fc.record(
              {
                value: v === 'strict' ? fc.nat() : fc.oneof(fc.nat(), fc.nat().map(String)),
                measurand: anyCase(['Energy.Active.Import.Register', 'Power.Active.Import'], v),
                unitOfMeasure: fc.record({ unit: anyCase(['Wh', 'kWh', 'W', 'kW'], v) }),
              },
              { requiredKeys: ['value'] },
            ),
            { minLength: 1, maxLength: 3 },
          ),
        }),
        { minLength: 1, maxLength: 2 },
      ),
    },
    { requiredKeys: ['eventType', 'timestamp', 'triggerReason', 'seqNo', 'transactionInfo'] },
  );

const eitherVariant = (of: (v: Variant) => fc.Arbitrary<Record<string, unknown>>) =>
  fc.oneof(of('strict'), of('loose'));
const meterValues16 = eitherVariant(meterValues16Of);
const status16 = eitherVariant(status16Of);
const transactionEvent201 = eitherVariant(transactionEvent201Of);

const cases: [string, string, FrameNormalizer, fc.Arbitrary<Record<string, unknown>>][] = [
  ['ocpp1.6', 'MeterValues', normalize16, meterValues16],
  ['ocpp1.6', 'StatusNotification', normalize16, status16],
  ['ocpp2.0.1', 'TransactionEvent', normalize201, transactionEvent201],
];

describe('the edge takes a call as it came only when the repair would not change it', () => {
  it.each(cases)(
    '%s %s: same message, no deviation noted',
    (subprotocol, method, normalizer, arb) => {
      let taken = 0;
      let repaired = 0;
      fc.assert(
        fc.property(arb, (message) => {
          if (!takenAsSent(subprotocol, normalizer, method, message)) {
            repaired++;
            return;
          }
          taken++;
          const notes: string[] = [];
          const original = structuredClone(message);
          const out = normalizer.request(method, structuredClone(message), (kind) =>
            notes.push(kind),
          );
          expect(out).toEqual(original);
          expect(notes).toEqual([]);
          // Asking does not change the message either.
          expect(message).toEqual(original);
        }),
        { numRuns: 1000 },
      );
      // Both branches were exercised: the property is not vacuous.
      expect(taken).toBeGreaterThan(0);
      expect(repaired).toBeGreaterThan(0);
    },
  );

  it('sends to the repair a valid call whose timestamp or 2.0.1 unit is not spelled canonically', () => {
    const event = (timestamp: string, unit: string) => ({
      eventType: 'Updated',
      timestamp,
      triggerReason: 'MeterValuePeriodic',
      seqNo: 1,
      transactionInfo: { transactionId: 'tx-1' },
      meterValue: [{ timestamp, sampledValue: [{ value: 1, unitOfMeasure: { unit } }] }],
    });
    const t = '2026-11-24T05:00:00.000Z';
    expect(takenAsSent('ocpp2.0.1', normalize201, 'TransactionEvent', event(t, 'Wh'))).toBe(true);
    expect(
      takenAsSent(
        'ocpp2.0.1',
        normalize201,
        'TransactionEvent',
        event('2026-11-24T05:00:00Z', 'Wh'),
      ),
    ).toBe(false);
    expect(takenAsSent('ocpp2.0.1', normalize201, 'TransactionEvent', event(t, 'kwh'))).toBe(false);
    const mv = {
      connectorId: 1,
      meterValue: [{ timestamp: '2026-11-24T06:00:00+01:00', sampledValue: [{ value: '5' }] }],
    };
    expect(takenAsSent('ocpp1.6', normalize16, 'MeterValues', mv)).toBe(false);
    expect(normalize16.request('MeterValues', mv, () => {})).toEqual({
      connectorId: 1,
      meterValue: [{ timestamp: t, sampledValue: [{ value: '5' }] }],
    });
  });
});
