import {
  ChargePoint16,
  type ChargePointOptions,
  type VehicleSpec,
} from '../../simulators/ocpp16/charge-point.js';
import { CHARGER_PASSWORD } from './gateway.js';

/**
 * The protocol the shared end-to-end tests run against. Each entry builds a simulator of that
 * protocol; the tests themselves never branch on the version.
 */
export interface ProtocolUnderTest {
  name: string;
  connect(
    ocppUrl: string,
    identity: string,
    options?: Partial<ChargePointOptions>,
  ): Promise<ChargePoint16>;
}

export const ocpp16: ProtocolUnderTest = {
  name: 'OCPP 1.6J',
  async connect(ocppUrl, identity, options = {}) {
    const cp = new ChargePoint16({
      url: ocppUrl,
      identity,
      password: CHARGER_PASSWORD,
      connectors: 2,
      maxPowerW: 150_000,
      timeFactor: 120,
      ...options,
    });
    await cp.connect();
    return cp;
  },
};

export const PROTOCOLS: ProtocolUnderTest[] = [ocpp16];

export const IONIQ: VehicleSpec = {
  model: 'Hyundai Ioniq 5',
  batteryKwh: 77.4,
  socPercent: 35,
  maxPowerW: 220_000,
};
