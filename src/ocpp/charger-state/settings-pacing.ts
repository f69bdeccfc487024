/**
 * When a booted charger's settings are read (and set where they differ).
 *
 * A charger or a few booting at a time have theirs read at once. In a reconnect storm (a gateway
 * restart, a site's network back: every station at once) admission comes first: a charger that
 * waits too long for its boot reply drops the link and comes back, and the storm feeds itself.
 * The reads wait until no charger has booted for `quietMs`, or until the oldest has waited
 * `maxWaitMs` (a site whose chargers never stop arriving still gets its reads), and then go
 * `parallel` at a time, so that they do not crowd out a Start or a meter sample either.
 *
 * A charger that is asked to start while its read waits has it sent at once (`promote`), ahead of
 * the remote start on the same link, as outside a storm: the read is what sets the charger to
 * report the energy it is paid for.
 */
export interface SettingsPacingOptions {
  /** Boots within one burst (no pause of quietMs between them) that are read at once. */
  immediate: number;
  quietMs: number;
  maxWaitMs: number;
  parallel: number;
  now?: () => number;
}

export const SETTINGS_PACING: SettingsPacingOptions = {
  immediate: 8,
  quietMs: 250,
  maxWaitMs: 30_000,
  parallel: 16,
};

interface Waiting {
  read: () => Promise<void>;
  since: number;
}

export class SettingsPacing {
  /** In boot order (a Map keeps insertion order): the first to boot is read first. */
  private readonly waiting = new Map<string, Waiting>();
  private running = 0;
  private burst = 0;
  private lastBootAt = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly now: () => number;

  constructor(private readonly opts: SettingsPacingOptions = SETTINGS_PACING) {
    this.now = opts.now ?? (() => performance.now());
  }

  /** A charger booted: `read` reads its settings, now or once the boots have calmed down. */
  booted(chargerId: string, read: () => Promise<void>): void {
    if (this.closed) return;
    const at = this.now();
    if (at - this.lastBootAt >= this.opts.quietMs) this.burst = 0;
    this.burst++;
    this.lastBootAt = at;
    // A charger booting again while its read waits keeps its place; the newer read replaces it.
    const earlier = this.waiting.get(chargerId);
    this.waiting.set(chargerId, { read, since: earlier?.since ?? at });
    this.pump();
  }

  /** The charger is asked to start: its read, if it still waits, goes now. */
  promote(chargerId: string): void {
    const entry = this.waiting.get(chargerId);
    if (!entry) return;
    this.waiting.delete(chargerId);
    this.run(entry);
  }

  /** The charger went offline: a read that waits for it is dropped. */
  forget(chargerId: string): void {
    this.waiting.delete(chargerId);
  }

  /** Reads not yet begun. */
  get pending(): number {
    return this.waiting.size;
  }

  close(): void {
    this.closed = true;
    this.waiting.clear();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private pump(): void {
    if (this.closed) return;
    const at = this.now();
    const calm = this.burst <= this.opts.immediate || at - this.lastBootAt >= this.opts.quietMs;
    for (const [chargerId, entry] of this.waiting) {
      if (this.running >= this.opts.parallel) return;
      if (!calm && at - entry.since < this.opts.maxWaitMs) break;
      this.waiting.delete(chargerId);
      this.run(entry);
    }
    if (this.waiting.size > 0 && this.running < this.opts.parallel) this.wake(at);
  }

  /** One timer, for when the boots will have been quiet long enough or the oldest waited enough. */
  private wake(at: number): void {
    if (this.timer) return;
    const oldest = this.waiting.values().next().value as Waiting;
    const dueMs = Math.min(
      this.lastBootAt + this.opts.quietMs - at,
      oldest.since + this.opts.maxWaitMs - at,
    );
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.pump();
      },
      Math.max(1, Math.ceil(dueMs)),
    );
    this.timer.unref();
  }

  private run(entry: Waiting): void {
    this.running++;
    void entry
      .read()
      .catch(() => undefined)
      .finally(() => {
        this.running--;
        this.pump();
      });
  }
}
