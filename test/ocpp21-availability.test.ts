import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { availabilityOf } from '../src/ocpp/v21/availability-event.js';

/**
 * 2.1's connector status as a NotifyEvent of AvailabilityState (src/ocpp/v21/availability-event.ts):
 * device-model names and the status are read without case, whoever spells them.
 */

const STATUSES = ['Available', 'Occupied', 'Reserved', 'Unavailable', 'Faulted'] as const;

/** The word with each letter in upper or lower case as the flags say. */
const spelled = (word: string, upper: boolean[]) =>
  [...word].map((c, i) => (upper[i % upper.length] ? c.toUpperCase() : c.toLowerCase())).join('');
const casing = fc.array(fc.boolean(), { minLength: 1, maxLength: 12 });

describe('a NotifyEvent AvailabilityState', () => {
  it('is a status in any case, of a Connector or EVSE (its EVSE) or the ChargingStation (EVSE 0)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...STATUSES),
        fc.constantFrom('Connector', 'EVSE', 'ChargingStation'),
        fc.integer({ min: 1, max: 8 }),
        casing,
        casing,
        casing,
        (status, component, evseId, valueCase, componentCase, variableCase) => {
          const value = spelled(status, valueCase);
          const reading = availabilityOf({
            actualValue: value,
            component: { name: spelled(component, componentCase), evse: { id: evseId } },
            variable: { name: spelled('AvailabilityState', variableCase) },
          });
          expect(reading).toEqual({
            evseId: component === 'ChargingStation' ? 0 : evseId,
            status,
            respelled: value !== status,
          });
        },
      ),
    );
  });

  it('another variable or component is not one; an unknown value or a missing EVSE is a problem', () => {
    const data = (component: object, variable: string, actualValue = 'Available') => ({
      actualValue,
      component: component as { name: string },
      variable: { name: variable },
    });
    expect(availabilityOf(data({ name: 'Connector', evse: { id: 1 } }, 'Problem'))).toBeNull();
    expect(availabilityOf(data({ name: 'Controller' }, 'AvailabilityState'))).toBeNull();
    expect(availabilityOf(data({ name: 'Connector' }, 'AvailabilityState'))).toEqual({
      problem: 'Connector without an EVSE',
    });
    expect(
      availabilityOf(data({ name: 'EVSE', evse: { id: 1 } }, 'AvailabilityState', 'Charging')),
    ).toEqual({ problem: 'unknown AvailabilityState Charging' });
  });
});
