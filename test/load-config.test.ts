import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../src/config/read-config.js';
import { SiteDirectory } from '../src/config/site.js';
import { ConfigLimits } from '../src/power/limits.js';
import { managedConnectors } from '../src/power/site-power.js';
import { testConfig } from './helpers/gateway.js';

const parse = (power: unknown) => parseConfig({ ...testConfig('/tmp/x'), power });

describe('power config', () => {
  it('is off without the key', () => {
    expect(parse(undefined).power).toBeUndefined();
  });

  it('reads the site and circuit limits in W, kW or A per phase', () => {
    const config = parse({
      limitA: 63,
      circuits: [
        {
          id: 'row-1',
          limitKw: 22,
          connectors: ['CP-1/1'],
          circuits: [{ id: 'row-1a', limitA: 16, connectors: ['CP-1/2'] }],
        },
      ],
    });
    expect(config.power).toMatchObject({ phases: 3, voltage: 230, policy: 'equal' });
    const limits = new ConfigLimits(config.power!);
    expect(limits.nodeIds()).toEqual(['site', 'row-1', 'row-1a']);
    expect(limits.limit('site')).toEqual({ nodeId: 'site', watts: 63 * 3 * 230, source: 'config' });
    expect(limits.limit('row-1').watts).toBe(22_000);
    expect(limits.limit('row-1a').watts).toBe(16 * 3 * 230);
    expect(() => limits.limit('nope')).toThrow();
  });

  it('names the key of a bad power tree', () => {
    const bad: [unknown, string][] = [
      [{}, 'power.limitKw'],
      [{ limitKw: 10, limitA: 16 }, 'power.limitKw'],
      [{ limitKw: 10, policy: 'first-come' }, 'power.policy'],
      [{ limitKw: 10, circuits: [{ id: 'a', connectors: [] }] }, 'power.circuits.0.limitKw'],
      [
        { limitKw: 10, circuits: [{ id: 'a', limitKw: 1, connectors: ['CP-1'] }] },
        'power.circuits.0.connectors.0',
      ],
      [
        {
          limitKw: 10,
          circuits: [
            { id: 'a', limitKw: 1 },
            { id: 'a', limitKw: 1 },
          ],
        },
        'power.circuits.1.id',
      ],
      [{ limitKw: 10, circuits: [{ id: 'site', limitKw: 1 }] }, 'power.circuits.0.id'],
      [
        {
          limitKw: 10,
          circuits: [
            { id: 'a', limitKw: 1, connectors: ['CP-1/1'] },
            { id: 'b', limitKw: 1, circuits: [{ id: 'c', limitKw: 1, connectors: ['CP-1/1'] }] },
          ],
        },
        'power.circuits.1.circuits.0.connectors.0',
      ],
    ];
    for (const [power, key] of bad) {
      expect(() => parse(power), JSON.stringify(power)).toThrow(ConfigError);
      expect(() => parse(power)).toThrow(`config key ${key}`);
    }
  });

  it('validates the per-connector load fields', () => {
    const chargers = (connector: object) => [
      { id: 'X', passwordHash: 'scrypt$x', connectors: [{ id: '1', tariff: 'ac', ...connector }] },
    ];
    const ok = parseConfig({
      ...testConfig('/tmp/x'),
      chargers: chargers({ minPowerKw: 1.4, maxCurrentA: 16, phases: 1 }),
    });
    expect(ok.chargers[0]?.connectors[0]).toMatchObject({
      minPowerKw: 1.4,
      maxCurrentA: 16,
      phases: 1,
    });
    for (const [connector, key] of [
      [{ minPowerKw: 5, maxPowerKw: 4 }, 'minPowerKw'],
      [{ phases: 2 }, 'phases'],
      [{ maxCurrentA: 0 }, 'maxCurrentA'],
    ] as const) {
      expect(() => parseConfig({ ...testConfig('/tmp/x'), chargers: chargers(connector) })).toThrow(
        `config key chargers.0.connectors.0.${key}`,
      );
    }
  });

  it('simulation.timeFactor scales the plausibility bound, never the maximum it allocates', () => {
    const chargers = [
      {
        id: 'SIM',
        passwordHash: 'scrypt$x',
        connectors: [
          { id: '1', tariff: 'dc', type: 'DC' as const, maxPowerKw: 50 },
          { id: '2', tariff: 'ac', type: 'AC' as const, maxCurrentA: 16 },
        ],
      },
    ];
    const at = (timeFactor?: number) => {
      const config = parseConfig({
        ...testConfig('/tmp/x'),
        chargers,
        power: { limitKw: 150 },
        ...(timeFactor === undefined ? {} : { simulation: { timeFactor } }),
      });
      const site = new SiteDirectory(config);
      const managed = managedConnectors(config, config.power!, site)();
      return {
        boundW: [site.connector('SIM', '1')?.maxPowerW, site.connector('SIM', '2')?.maxPowerW],
        maxW: managed.map((c) => c.maxW),
      };
    };
    // The bound: rated power (AC without maxPowerKw: the type's 22 kW) plus 10 %, times the factor.
    const bound = (factor: number) => [50_000, 22_000].map((w) => Math.ceil(w * 1.1 * factor));
    expect(at()).toEqual({ boundW: bound(1), maxW: [50_000, 16 * 3 * 230] });
    expect(at(40)).toEqual({ boundW: bound(40), maxW: [50_000, 16 * 3 * 230] });
    expect(() => at(0.5)).toThrow('config key simulation.timeFactor');
  });
});
