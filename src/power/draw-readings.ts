import type { MeterSample } from '../ocpp/port.js';
import { connectorKey, type LoadManagerOptions } from './power-model.js';
import type { PowerState } from './power-state.js';
import type { ProfileSender } from './profile-sender.js';

/**
 * Measured power this far from the allocation starts a reallocation: 10% of the allowance, and
 * at least 1 kW (meter noise and AC phase steps stay under it).
 */
export const DEPARTURE_FRACTION = 0.1;
export const DEPARTURE_MIN_W = 1000;

/**
 * The connectors' live power readings: the latest per connector (the site view), and each judged
 * against the allowance its session had then; a departure from it starts a round.
 */
export class DrawReadings {
  constructor(
    private readonly state: PowerState,
    private readonly o: LoadManagerOptions,
    private readonly sender: ProfileSender,
    private readonly reallocate: (reason: string) => void,
  ) {}

  /**
   * Live power readings: per connector for the site view (the latest measured); a departure
   * reallocates. Each is judged at the time it was measured, against the allowances that may
   * have held then (history/ramp: `AllowanceHistory`), never against one accepted after it.
   */
  sampled(sample: MeterSample): void {
    if (!sample.live || sample.powerW === null) return;
    const k = connectorKey(sample.chargerId, sample.connectorId);
    const latest = this.state.measured.get(k);
    if (!latest || latest.atMs <= sample.time.measuredAtMs)
      this.state.measured.set(k, { watts: sample.powerW, atMs: sample.time.measuredAtMs });
    if (sample.transactionRef === null) return;
    const s = this.o
      .active()
      .find((a) => a.chargerId === sample.chargerId && a.transactionRef === sample.transactionRef);
    if (!s) return;
    const band = this.state.allowances.band(s.sessionId, sample.time.measuredAtMs);
    if (!band) return;
    const marginOf = (w: number) => Math.max(DEPARTURE_MIN_W, w * DEPARTURE_FRACTION);
    const over = sample.powerW > band.high + marginOf(band.high);
    const under = sample.powerW < band.low - marginOf(band.low);
    if (!under) this.state.underDraw.delete(s.sessionId);
    if (!over) this.state.overDraw.delete(s.sessionId);
    if (over) {
      // Past every allowance that held then on two readings in a row: it does not obey; counted
      // at its maximum from now on.
      if (!this.state.overDraw.has(s.sessionId)) {
        this.state.overDraw.add(s.sessionId);
        return;
      }
      this.state.overDraw.delete(s.sessionId);
      this.o.log.warn(
        {
          sessionId: s.sessionId,
          measuredW: sample.powerW,
          allowedW: band.high,
          measuredAt: new Date(sample.time.measuredAtMs).toISOString(),
        },
        'charger draws past its charging profile',
      );
      this.sender.refused(s.chargerId, 'overdraw');
      this.reallocate('overdraw');
    } else if (under && this.state.drawCap.get(s.sessionId) === undefined) {
      // The EV takes less than it may (taper, full battery): the rest goes to the others, once
      // two readings in a row agree (an EV still ramping up is not held at its first reading).
      const margin = marginOf(band.low);
      const previous = this.state.underDraw.get(s.sessionId);
      this.state.underDraw.set(s.sessionId, sample.powerW);
      if (previous === undefined || Math.abs(previous - sample.powerW) > margin) return;
      this.state.underDraw.delete(s.sessionId);
      this.state.drawCap.set(s.sessionId, Math.ceil(sample.powerW + margin));
      this.reallocate('under_draw');
    } else if (
      this.state.drawCap.get(s.sessionId) !== undefined &&
      sample.powerW >= band.at - marginOf(band.at) / 2 &&
      band.at >= (this.state.drawCap.get(s.sessionId) ?? 0)
    ) {
      // It rose to its cap: it may want more again.
      this.state.drawCap.delete(s.sessionId);
      this.reallocate('draw_rising');
    }
  }
}
