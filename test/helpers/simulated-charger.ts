import { ChargePoint16 } from '../../simulators/ocpp16/charge-point.js';
import { ChargePoint201 } from '../../simulators/ocpp201/charge-point.js';
import type {
  ChargePointOptions,
  SimulatedChargePoint,
  VehicleSpec,
} from '../../simulators/shared/simulated-charge-point.js';
import type { Db } from '../../src/store/database.js';
import { CHARGER_PASSWORD } from './gateway.js';
import { waitUntil } from './wait.js';

export type { SimulatedChargePoint };

/**
 * The protocols the shared end-to-end tests run against. Each entry builds a simulator of that
 * protocol; the tests themselves never branch on the version.
 */
export interface ProtocolUnderTest {
  name: string;
  connect(
    ocppUrl: string,
    identity: string,
    options?: Partial<ChargePointOptions>,
  ): Promise<SimulatedChargePoint>;
}

function defaults(ocppUrl: string, identity: string): ChargePointOptions {
  return {
    url: ocppUrl,
    identity,
    password: CHARGER_PASSWORD,
    connectors: 2,
    maxPowerW: 150_000,
    timeFactor: 120,
  };
}

export const ocpp16: ProtocolUnderTest = {
  name: 'OCPP 1.6J',
  async connect(ocppUrl, identity, options = {}) {
    const cp = new ChargePoint16({ ...defaults(ocppUrl, identity), ...options });
    await cp.connect();
    return cp;
  },
};

export const ocpp201: ProtocolUnderTest = {
  name: 'OCPP 2.0.1',
  async connect(ocppUrl, identity, options = {}) {
    const cp = new ChargePoint201({ ...defaults(ocppUrl, identity), ...options });
    await cp.connect();
    return cp;
  },
};

export const PROTOCOLS: ProtocolUnderTest[] = [ocpp16, ocpp201];

export const IONIQ: VehicleSpec = {
  model: 'Hyundai Ioniq 5',
  batteryKwh: 77.4,
  socPercent: 35,
  maxPowerW: 220_000,
};

/** Connects a simulator and waits until the gateway has recorded its boot (and configures it). */
export async function bootedCharger(
  protocol: ProtocolUnderTest,
  gw: { ocppUrl: string; db: Db },
  identity: string,
  options: Partial<ChargePointOptions> = {},
): Promise<SimulatedChargePoint> {
  const cp = await protocol.connect(gw.ocppUrl, identity, options);
  await waitUntil(
    () =>
      gw.db
        .prepare('SELECT 1 FROM charger_info WHERE charger_id = ? AND booted_at IS NOT NULL')
        .get(identity),
    5000,
    `${identity} booted`,
  );
  return cp;
}
