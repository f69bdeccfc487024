import type { MeterSample } from '../ocpp/port.js';
import { OBEY_MS } from './allowance-history.js';
import { connectorKey, type ActiveSession, type LoadManagerOptions } from './power-model.js';
import type { PowerState } from './power-state.js';
import type { ProfileSender } from './profile-sender.js';

/**
 * Measured power this far from the allocation starts a reallocation: 10% of the allowance, and
 * at least 1 kW (meter noise and AC phase steps stay under it).
 */
export const DEPARTURE_FRACTION = 0.1;
export const DEPARTURE_MIN_W = 1000;
const marginOf = (w: number) => Math.max(DEPARTURE_MIN_W, w * DEPARTURE_FRACTION);

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
    if (!sample.live) return;
    const s =
      sample.transactionRef === null
        ? undefined
        : this.o
            .active()
            .find(
              (a) => a.chargerId === sample.chargerId && a.transactionRef === sample.transactionRef,
            );
    // A charger back from a boot that reports the transaction still runs it: its profile now.
    if (s && this.state.unheard.delete(s.sessionId)) this.reallocate('transaction_heard');
    if (sample.powerW === null) return;
    const k = connectorKey(sample.chargerId, sample.connectorId);
    const latest = this.state.measured.get(k);
    if (!latest || latest.atMs <= sample.time.measuredAtMs)
      this.state.measured.set(k, { watts: sample.powerW, atMs: sample.time.measuredAtMs });
    if (!s) return;
    this.judgeObeying(s, sample.powerW, sample.time.measuredAtMs);
    const band = this.state.allowances.band(s.sessionId, sample.time.measuredAtMs);
    if (!band) return;
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

  /**
   * The site's sum holds what a connector really draws: two readings in a row taken OBEY_MS after
   * its charger accepted a profile and still above it by more than the departure threshold count
   * it at what it measures, its excess taken from the others in the round this starts; each
   * reading moves that count by more than the threshold, and two in a row within the profile end
   * it. No verdict on the charger (a slow ramp down is counted too); the ramp time's overdraw
   * above is the verdict.
   */
  private judgeObeying(s: ActiveSession, watts: number, atMs: number): void {
    const band = this.state.allowances.band(s.sessionId, atMs, OBEY_MS);
    if (!band) return;
    const id = s.sessionId;
    const past = watts > band.high + marginOf(band.high);
    const counted = this.state.drawing.get(id);
    if (!past) this.state.firstPast.delete(id);
    if (counted === undefined) {
      if (!past) return;
      if (!this.state.firstPast.has(id)) {
        this.state.firstPast.add(id);
        return;
      }
      this.state.firstPast.delete(id);
      this.state.drawing.set(id, { watts, atMs });
      this.o.log.warn(
        {
          sessionId: id,
          measuredW: watts,
          allowedW: band.high,
          measuredAt: new Date(atMs).toISOString(),
        },
        'charger draws past the profile it accepted: counted at what it draws',
      );
      this.reallocate('drawing_past_profile');
      return;
    }
    if (atMs < counted.atMs) return;
    if (past) {
      this.state.firstWithin.delete(id);
      if (Math.abs(watts - counted.watts) <= marginOf(counted.watts)) return;
      this.state.drawing.set(id, { watts, atMs });
      this.reallocate('drawing_past_profile');
      return;
    }
    if (!this.state.firstWithin.has(id)) {
      this.state.firstWithin.add(id);
      return;
    }
    this.state.firstWithin.delete(id);
    this.state.drawing.delete(id);
    this.reallocate('obeys_profile');
  }
}
