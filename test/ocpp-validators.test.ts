import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { lazyValidator } from '../src/gateway/ocpp-validators.js';

const load = createRequire(import.meta.url);

interface Validator {
  subprotocol: string;
  validate(schemaId: string, params: unknown): unknown;
}

/** What a validator answers: true, or the RPC error it throws (its name, message and details). */
function answer(v: Validator, id: string, params: unknown): unknown {
  try {
    return v.validate(id, params);
  } catch (err) {
    const e = err as Error & { rpcErrorCode?: string; details?: unknown };
    return { name: e.name, code: e.rpcErrorCode, message: e.message, details: e.details };
  }
}

describe("ocpp-rpc's validators built on first use", () => {
  it('answer as ocpp-rpc built them: valid, invalid, unknown action', () => {
    const cases: [string, string, string, unknown][] = [
      ['ocpp1.6', 'ocpp1_6', 'urn:Heartbeat.req', {}],
      ['ocpp1.6', 'ocpp1_6', 'urn:BootNotification.req', { chargePointVendor: 'v' }],
      [
        'ocpp1.6',
        'ocpp1_6',
        'urn:BootNotification.req',
        { chargePointVendor: 'v', chargePointModel: 'm' },
      ],
      ['ocpp1.6', 'ocpp1_6', 'urn:MeterValues.req', { connectorId: -1, meterValue: [] }],
      ['ocpp1.6', 'ocpp1_6', 'urn:NoSuchAction.req', {}],
      ['ocpp2.0.1', 'ocpp2_0_1', 'urn:HeartbeatRequest', {}],
      ['ocpp2.0.1', 'ocpp2_0_1', 'urn:StatusNotificationRequest', { connectorStatus: 'Nope' }],
      ['ocpp2.1', 'ocpp2_1', 'urn:HeartbeatRequest', { extra: 1 }],
    ];
    const { createValidator } = load('ocpp-rpc/lib/validator.js') as {
      createValidator(p: string, json: unknown): Validator;
    };
    for (const [protocol, file, id, params] of cases) {
      const schemas = `ocpp-rpc/lib/schemas/${file}.json`;
      const lazy = lazyValidator(protocol, schemas);
      expect(lazy.subprotocol).toBe(protocol);
      const eager = createValidator(protocol, load(schemas));
      expect(answer(lazy, id, params), `${protocol} ${id}`).toEqual(answer(eager, id, params));
    }
  });

  it("take the place of ocpp-rpc's own when the gateway is loaded, none built until used", () => {
    const script = `
      import { createRequire } from 'node:module';
      const load = createRequire(import.meta.url);
      await import('./dist/gateway.js');
      const loaded = Object.keys(load.cache).filter((k) => k.includes('/schemas/'));
      const validators = load('ocpp-rpc/lib/standard-validators.js');
      const server = new (load('ocpp-rpc').RPCServer)({ protocols: ['ocpp1.6', 'ocpp2.1'], strictMode: true });
      console.log(JSON.stringify({ loaded, protocols: validators.map((v) => v.subprotocol), strict: server._strictValidators.size }));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: new URL('..', import.meta.url),
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual({
      loaded: [],
      protocols: ['ocpp1.6', 'ocpp2.0.1', 'ocpp2.1'],
      strict: 3,
    });
  });
});
