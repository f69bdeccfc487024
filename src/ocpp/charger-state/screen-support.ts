import type { Logger } from '../../shared/log.js';
import type { OcppEventLog } from '../connection/event-log.js';

/**
 * A way a charger can show the driver something, named as its protocol names it (1.6:
 * `SetUserPrice`, `RunningCost`, `FinalCost`; 2.0.1: `personalMessage`, `totalCost`,
 * `CostUpdated`, `SetDisplayMessage`).
 */
export type ScreenWay = string;

interface Held {
  ways: Set<ScreenWay>;
}

/**
 * What each charger can show on its screen, as it advertised it (read once, the first time a
 * paid session needs it, and again after each boot), less what it refused or failed: a refusal
 * is remembered until the charger boots again, so a charger that cannot take a running cost is
 * not asked on every sample. One store for every connection: a reconnect keeps what was learnt.
 */
export class ChargerScreens {
  private readonly held = new Map<string, Held>();
  private readonly reading = new Map<string, Promise<Held>>();

  constructor(
    private readonly eventLog: OcppEventLog,
    private readonly log: Logger,
  ) {}

  /** The ways known now, or undefined when they were never read (since the last boot). */
  known(chargerId: string): ReadonlySet<ScreenWay> | undefined {
    return this.held.get(chargerId)?.ways;
  }

  /** The ways, read from the charger by `read` once; a read that fails leaves none. */
  async ways(chargerId: string, read: () => Promise<ScreenWay[]>): Promise<ReadonlySet<ScreenWay>> {
    const held = this.held.get(chargerId);
    if (held) return held.ways;
    let pending = this.reading.get(chargerId);
    if (!pending) {
      pending = read()
        .catch((err: unknown) => {
          this.log.warn({ chargerId, err: (err as Error).message }, 'screen support not read');
          return [];
        })
        .then((ways) => {
          const got = { ways: new Set(ways) };
          // A boot while the read was out forgot it: what was read still holds for this boot.
          this.held.set(chargerId, got);
          this.reading.delete(chargerId);
          if (ways.length > 0) {
            this.eventLog.record(chargerId, 'screen', `shows: ${ways.join(', ')}`);
          }
          return got;
        });
      this.reading.set(chargerId, pending);
    }
    return (await pending).ways;
  }

  /**
   * The ways, read by another call that asked the charger anyway (1.6: the configuration read at
   * boot), so a paid session's first start needs no read of its own. A read already held stays.
   */
  learnt(chargerId: string, ways: ScreenWay[]): void {
    if (this.held.has(chargerId)) return;
    this.held.set(chargerId, { ways: new Set(ways) });
    if (ways.length > 0) this.eventLog.record(chargerId, 'screen', `shows: ${ways.join(', ')}`);
  }

  /** The charger refused a way or failed at it: not used again until it boots. */
  refused(chargerId: string, way: ScreenWay, answer: string): void {
    const held = this.held.get(chargerId);
    if (!held?.ways.delete(way)) return;
    this.eventLog.record(
      chargerId,
      'screen',
      `${way} not taken (${answer}): not sent again until the charger boots`,
    );
  }

  /** The charger booted: its firmware (and what it shows) may have changed. */
  forget(chargerId: string): void {
    this.held.delete(chargerId);
  }
}
