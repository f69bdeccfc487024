/**
 * Each charger's clock, as seen from ours. A message stamped by the charger at `stamped` reaches us
 * at `received` = stamped + skew + delay, where delay (network, queueing while offline) is never
 * negative. Over the charger's recent messages the smallest received − stamped is the skew plus
 * the shortest delay: the estimate of its clock offset. A queued burst only adds large values, so
 * it cannot move the estimate; a charger hours off gets an offset of hours, and its live readings
 * an age of about zero. A charger's time, corrected (stamped + offset), is never after our receive
 * time, and differences between its corrected times are its own clock's: a queued burst stamped
 * over half an hour spans half an hour, whenever it arrives.
 *
 * A clock step undoes that: when our clock steps forward (NTP, an operator setting it) or the
 * charger's steps back, every received − stamped grows by the step while the minimum keeps the old
 * offset, so each live reading would look the step old and a paid-energy stop planned from it
 * would fire that much early (seen in the load site test: 2 kWh sessions stopped at 430 Wh after
 * the gateway's clock moved 2 minutes). A reading can only be queued by a charger that was
 * offline, so one late past the estimate by more than `STEP_MS` while the charger stayed connected
 * means the clocks stepped, and so does a live one (sent as it was taken) at any time: the
 * estimate starts again from it. After a reconnect a queued burst arrives late by design: there it
 * takes two readings in a row late by the same amount (a burst's lateness falls by its sample
 * interval from one reading to the next). Taking a slow message for a step costs a reading: the
 * next normal one lowers the minimum again.
 *
 * The estimate lives in memory, per charger; a reboot forgets it (the charger's clock may reset).
 */
const WINDOW = 16;
/** A live reading arriving later than this past the estimate: the clocks stepped. */
export const STEP_MS = 5_000;
/** A charger whose clock says it is before this has never set it (1970 after a reboot). */
const TRUSTED_CLOCK_FROM = Date.parse('2020-01-01T00:00:00Z');

export interface ChargerTime {
  /** The charger's own clock (ms): rates are its deltas. Our receive time when unusable. */
  stampMs: number;
  /** The charger's timestamp on our clock (ms); our receive time when the stamp is unusable. */
  atMs: number;
  /** How long before it reached us the reading was taken (ms, >= 0). */
  ageMs: number;
}

export class ChargerClocks {
  /** Per charger: received − stamped of its latest messages, oldest first. */
  private readonly deltas = new Map<string, number[]>();
  /** Per charger: received − stamped of its last message when that was late past the estimate. */
  private readonly late = new Map<string, number>();
  /** Chargers that reconnected and may still send readings queued while offline. */
  private readonly mayQueue = new Set<string>();

  /** The charger (re)connected: readings it queued while offline may follow. */
  connected(chargerId: string): void {
    if (this.deltas.has(chargerId)) this.mayQueue.add(chargerId);
  }

  /**
   * Takes a message's stamp into the charger's estimate and places it on our clock. `live`: the
   * message was sent as it was taken (not queued), so its delay is short.
   */
  observe(chargerId: string, timestamp: string, receivedAtMs: number, live = false): ChargerTime {
    const stamped = Date.parse(timestamp);
    if (!Number.isFinite(stamped) || stamped < TRUSTED_CLOCK_FROM)
      return { stampMs: receivedAtMs, atMs: receivedAtMs, ageMs: 0 };
    const delta = receivedAtMs - stamped;
    let seen = this.deltas.get(chargerId) ?? [];
    const late = seen.length > 0 && delta - Math.min(...seen) > STEP_MS;
    const lateBefore = this.late.get(chargerId);
    if (!late) this.mayQueue.delete(chargerId);
    const sameStep = lateBefore !== undefined && Math.abs(delta - lateBefore) <= STEP_MS;
    if (late && (live || !this.mayQueue.has(chargerId) || sameStep)) seen = [];
    if (late && seen.length > 0) this.late.set(chargerId, delta);
    else this.late.delete(chargerId);
    seen.push(delta);
    if (seen.length > WINDOW) seen.shift();
    this.deltas.set(chargerId, seen);
    const atMs = stamped + Math.min(...seen);
    return { stampMs: stamped, atMs, ageMs: receivedAtMs - atMs };
  }

  /** The charger's offset (our clock − its clock, ms), or null before any usable stamp. */
  offsetMs(chargerId: string): number | null {
    const seen = this.deltas.get(chargerId);
    return seen && seen.length > 0 ? Math.min(...seen) : null;
  }

  forget(chargerId: string): void {
    this.deltas.delete(chargerId);
    this.late.delete(chargerId);
    this.mayQueue.delete(chargerId);
  }
}
