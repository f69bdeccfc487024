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
 * The estimate lives in memory, per charger; a reboot forgets it (the charger's clock may reset).
 */
const WINDOW = 16;
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

  /** Takes a message's stamp into the charger's estimate and places it on our clock. */
  observe(chargerId: string, timestamp: string, receivedAtMs: number): ChargerTime {
    const stamped = Date.parse(timestamp);
    if (!Number.isFinite(stamped) || stamped < TRUSTED_CLOCK_FROM)
      return { stampMs: receivedAtMs, atMs: receivedAtMs, ageMs: 0 };
    const seen = this.deltas.get(chargerId) ?? [];
    seen.push(receivedAtMs - stamped);
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
  }
}
