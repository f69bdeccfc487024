import { expect } from 'vitest';
import type { GatewayConfigInput } from '../../src/config/schema.js';
import { API_KEY, DRIVERS, PASSWORD_HASH, startTestGateway, type TestGateway } from './gateway.js';
import { mintToken, startSession } from './http.js';
import { createOperator, op } from './operator.js';
import {
  raw16,
  type Frame,
  type RawProtocol,
  type RawStation,
  type StationTx,
} from './raw-stations.js';

/**
 * A 30 kW site of one-connector 22 kW DC chargers under site power, driven by raw-frame stations
 * of one protocol over real sockets. The gateway's clock (the test's ManualClock) is moved instead
 * of sleeping; the stations stamp their frames on it.
 */

export interface SitePower {
  sessions: {
    chargerId: string;
    state: string;
    allocatedKw: number;
    confirmedKw: number | null;
  }[];
}

/** A SetChargingProfile a station received, on the gateway's clock. */
export interface ReceivedProfile {
  atMs: number;
  purpose: string;
  limit: number;
  transactionId: string | null;
}

export function rawPowerSite(protocol: RawProtocol) {
  let t: TestGateway | undefined;
  const stations: RawStation[] = [];
  const viewers = new WeakMap<TestGateway, string>();

  const stamp = (gw: TestGateway, msFromNow = 0) =>
    new Date(gw.clock.now() + msFromNow).toISOString();

  return {
    async close() {
      await Promise.all(stations.splice(0).map((s) => s.close()));
      await t?.close();
      t = undefined;
    },

    /** Chargers by id, each with its connector's minPowerKw (undefined: the DC default, 0). */
    async site(chargers: Record<string, number | undefined>) {
      const list: GatewayConfigInput['chargers'] = Object.entries(chargers).map(([id, min]) => ({
        id,
        passwordHash: PASSWORD_HASH,
        connectors: [
          {
            id: '1',
            tariff: 'dc',
            type: 'DC' as const,
            maxPowerKw: 22,
            ...(min !== undefined && { minPowerKw: min }),
          },
        ],
      }));
      t = await startTestGateway({ chargers: list, power: { limitKw: 30 } });
      return t;
    },

    async station(gw: TestGateway, id: string, onConnect?: (s: RawStation) => void) {
      const s = await protocol.connect(gw.gw.ocppUrl, id);
      stations.push(s);
      onConnect?.(s);
      await s.reboot();
      await s.send(s.status(1, 'Available'));
      return s;
    },

    /** Records every SetChargingProfile the station takes (all Accepted), on the gateway's clock. */
    recordProfiles(gw: TestGateway, s: RawStation, into: ReceivedProfile[]) {
      s.cp.handle('SetChargingProfile', async ({ params }) => {
        const p = params as Record<string, Record<string, unknown> | undefined>;
        const profile = (p.csChargingProfiles ?? p.chargingProfile) as Record<string, unknown>;
        const schedule = [profile.chargingSchedule].flat()[0] as {
          chargingSchedulePeriod: { limit: number }[];
        };
        into.push({
          atMs: gw.clock.now(),
          purpose: String(profile.chargingProfilePurpose),
          limit: schedule.chargingSchedulePeriod[0]?.limit ?? -1,
          transactionId: profile.transactionId === undefined ? null : String(profile.transactionId),
        });
        return { status: 'Accepted' };
      });
    },

    async charge(gw: TestGateway, s: RawStation, id: string) {
      const token = await mintToken(gw.gw.url, API_KEY, DRIVERS.ada.email);
      const target = { chargerId: id, connectorId: '1', driverEmail: DRIVERS.ada.email };
      const res = await startSession(gw.gw.url, token, target, 5_000);
      expect(res.status).toBe(200);
      const { tx } = await s.start(10_000, { timestamp: stamp(gw) });
      return { tx, token, sessionId: (res.body as { sessionId: string }).sessionId };
    },

    /** A live sample with its power, stamped on the gateway's clock (`at` ms from now). */
    reading(gw: TestGateway, s: RawStation, tx: StationTx, wh: number, w: number, at = 0) {
      const frame: Frame = s.sample(tx, wh, { timestamp: stamp(gw, at) });
      const meterValue = frame.params.meterValue as { sampledValue: unknown[] }[];
      meterValue[0]?.sampledValue.push(
        protocol === raw16
          ? { measurand: 'Power.Active.Import', value: String(w), unit: 'W' }
          : { measurand: 'Power.Active.Import', value: w, unitOfMeasure: { unit: 'W' } },
      );
      return s.send(frame);
    },

    /** The operator's view of the sessions' power. */
    async power(gw: TestGateway) {
      const viewer = viewers.get(gw) ?? createOperator(gw.gw.db, 'viewer', 'viewer');
      viewers.set(gw, viewer);
      const res = await op(gw.gw.operatorUrl, viewer, 'GET', '/site/power');
      expect(res.status).toBe(200);
      return (res.body as SitePower).sessions;
    },
  };
}

export const sessionOf = (sessions: SitePower['sessions'], chargerId: string) =>
  sessions.find((s) => s.chargerId === chargerId);
