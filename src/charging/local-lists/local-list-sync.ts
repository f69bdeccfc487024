import type {
  ChargerLocalAuthorization,
  LocalAuthCapability,
  LocalListUpdate,
} from '../../ocpp/port.js';
import type { Clock } from '../../shared/clock.js';
import type { Logger } from '../../shared/log.js';
import { clearUnrefTimer } from '../../shared/unref-timer.js';
import type { ChargerEventListener } from '../charger-event-dispatcher.js';
import { fitToList, planUpdates, type KeyedEntry, type ListLimits } from './list-plan.js';
import type { LocalListStore } from './list-store.js';
import type { WantedList } from './wanted-list.js';

export interface LocalListSettings {
  enabled: boolean;
  offlineStarts: boolean;
  maxEntries: number;
  pollSeconds: number;
  concurrency: number;
  retrySeconds: number;
  maxRetrySeconds: number;
}

export interface LocalListSyncDeps {
  chargers: ChargerLocalAuthorization & { isOnline(chargerId: string): boolean };
  /** The site's charger ids. */
  chargerIds: () => readonly string[];
  wanted: WantedList;
  store: LocalListStore;
  clock: Clock;
  log: Logger;
  settings: LocalListSettings;
}

/** Entries one SendLocalList carries where the charger does not say. */
const DEFAULT_ITEMS_PER_MESSAGE = 100;
/** A connection's first call waits this long: its BootNotification is answered first. */
const FIRST_CALL_DELAY_MS = 1000;

/** What the gateway knows of one charger's connection (forgotten when it connects again). */
interface Link {
  capability: LocalAuthCapability | null;
  /** Its list version was compared with the gateway's on this connection. */
  versionChecked: boolean;
  /** A cached token may have become unpayable since its cache was last cleared. */
  clearCache: boolean;
  failures: number;
  nextAttemptMs: number;
  busy: boolean;
}

class UpdateRefused extends Error {}

/**
 * Keeps every charger's local list in step with the wallets, and its cache from authorizing a
 * wallet that can no longer pay (docs/driver-tokens.md#local-lists-and-the-cache).
 *
 * A change is noticed by a poll: each round reads the wanted list once (wanted-list.ts) and each
 * online charger's is compared in memory with what it holds (list-store.ts). A poll, not hooks,
 * because what changes the list has many writers (taps, settlements, top-ups from the cloud,
 * operators, the roster) and one of its causes has none (a token reaching its expiry); and many
 * changes between two rounds cost one update. Work per round is bounded: a few chargers at a time
 * (`concurrency`), each update cut to the charger's own bounds, a failing charger retried with a
 * doubling wait.
 */
export class LocalListSync implements ChargerEventListener {
  private readonly links = new Map<string, Link>();
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<void> | null = null;
  private lastAccepted = new Set<string>();
  private closed = false;

  constructor(private readonly deps: LocalListSyncDeps) {}

  start(): void {
    this.schedule();
  }

  close(): void {
    this.closed = true;
    clearUnrefTimer(this.timer);
    this.timer = null;
  }

  /** A new connection: its settings, cache and list version are asked again. */
  chargerOnline(chargerId: string): void {
    this.links.set(chargerId, this.newLink());
  }

  /** A reboot: the list is sent whole, whatever version the charger says it holds. */
  chargerBooted(chargerId: string): void {
    this.deps.store.wantFull(chargerId);
    this.links.set(chargerId, this.newLink());
  }

  /** One round now (tests; the timer runs them otherwise). Resolves when it is done. */
  runRound(): Promise<void> {
    this.round ??= this.roundOnce().finally(() => {
      this.round = null;
    });
    return this.round;
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      void this.runRound().finally(() => this.schedule());
    }, this.deps.settings.pollSeconds * 1000);
    this.timer.unref();
  }

  private newLink(): Link {
    return {
      capability: null,
      versionChecked: false,
      clearCache: false,
      failures: 0,
      nextAttemptMs: this.deps.clock.now() + FIRST_CALL_DELAY_MS,
      busy: false,
    };
  }

  private async roundOnce(): Promise<void> {
    const { wanted, chargers, clock, settings } = this.deps;
    if (!wanted.anyBound()) return;
    const nowMs = clock.now();
    const entries = wanted.read(nowMs);
    const accepted = new Set(entries.filter((e) => e.status === 'accepted').map((e) => e.key));
    // A token that was payable and is no longer: every cache that may hold it is cleared.
    const lost = [...this.lastAccepted].some((key) => !accepted.has(key));
    this.lastAccepted = accepted;
    const due: string[] = [];
    for (const chargerId of this.deps.chargerIds()) {
      if (!chargers.isOnline(chargerId)) continue;
      let link = this.links.get(chargerId);
      if (!link) {
        link = this.newLink();
        this.links.set(chargerId, link);
      }
      if (lost && link.capability?.cache === 'enabled') link.clearCache = true;
      if (!link.busy && link.nextAttemptMs <= nowMs) due.push(chargerId);
    }
    const queue = [...due];
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        await this.syncCharger(id, entries);
      }
    };
    await Promise.all(Array.from({ length: Math.min(settings.concurrency, due.length) }, worker));
  }

  private async syncCharger(chargerId: string, entries: readonly KeyedEntry[]): Promise<void> {
    const link = this.links.get(chargerId);
    if (!link || this.closed) return;
    link.busy = true;
    try {
      await this.bringInStep(chargerId, link, entries);
      link.failures = 0;
    } catch (err) {
      link.failures += 1;
      const { retrySeconds, maxRetrySeconds } = this.deps.settings;
      const waitMs = Math.min(retrySeconds * 2 ** (link.failures - 1), maxRetrySeconds) * 1000;
      link.nextAttemptMs = this.deps.clock.now() + waitMs;
      this.deps.log.warn(
        { chargerId, err: (err as Error).message, failures: link.failures, retryInMs: waitMs },
        'local list not brought in step: retried later',
      );
    } finally {
      link.busy = false;
    }
  }

  private async bringInStep(
    chargerId: string,
    link: Link,
    entries: readonly KeyedEntry[],
  ): Promise<void> {
    const { chargers, settings, log } = this.deps;
    if (link.capability === null) {
      const capability = await chargers.prepareLocalAuthorization(chargerId, {
        listEnabled: settings.enabled,
        offlineStarts: settings.offlineStarts,
      });
      link.capability = capability;
      // Whatever it cached before, from this gateway or another: cleared once.
      link.clearCache = capability.cache === 'enabled';
      log.info(
        {
          chargerId,
          listSupported: capability.listSupported,
          cache: capability.cache,
          ...(capability.refused.length > 0 ? { refused: capability.refused } : {}),
        },
        'local authorization prepared',
      );
    }
    const capability = link.capability;
    if (link.clearCache) {
      const outcome = await chargers.clearCache(chargerId);
      link.clearCache = false;
      if (outcome !== 'accepted') {
        log.warn({ chargerId, outcome }, 'authorization cache not cleared');
      }
    }
    if (!settings.enabled || !capability.listSupported) return;
    await this.checkVersion(chargerId, link);
    if (!capability.listSupported) return;
    const limits: ListLimits = {
      maxEntries: Math.min(capability.maxEntries ?? settings.maxEntries, settings.maxEntries),
      maxTokenLength: capability.maxTokenLength,
      itemsPerMessage: capability.itemsPerMessage ?? DEFAULT_ITEMS_PER_MESSAGE,
      bytesPerMessage: capability.bytesPerMessage,
    };
    const { entries: target, left } = fitToList(entries, limits);
    const held = this.deps.store.held(chargerId);
    const plan = planUpdates(
      held === null || held.fullWanted ? null : held.entries,
      target,
      limits,
    );
    if (plan.length === 0) return;
    let version = held?.version ?? 0;
    for (const update of plan) {
      version += 1;
      const message: LocalListUpdate = {
        kind: update.kind,
        version,
        put: update.put.map(({ key: _key, ...entry }) => entry),
        remove: update.remove.map((e) => ({ value: e.value, type: e.type })),
      };
      const outcome = await chargers.sendLocalList(chargerId, message);
      if (outcome === 'accepted') {
        this.deps.store.accepted(chargerId, update, version);
        continue;
      }
      if (outcome === 'not_supported') {
        capability.listSupported = false;
        log.warn({ chargerId }, 'local list not supported after all: no more updates sent');
        return;
      }
      // Failed or VersionMismatch: what the charger holds is not known any more.
      this.deps.store.wantFull(chargerId);
      link.versionChecked = false;
      throw new UpdateRefused(`SendLocalList ${update.kind} version ${version}: ${outcome}`);
    }
    log.info(
      {
        chargerId,
        version,
        updates: plan.length,
        entries: target.length,
        ...(left > 0 ? { left } : {}),
      },
      'local list updated',
    );
  }

  /**
   * Once per connection: the charger's list version against the gateway's. A charger that
   * holds another version (reset, replaced, updated by someone else) gets the whole list; one
   * that has no list (null) gets none. An empty list may be said as version 0.
   */
  private async checkVersion(chargerId: string, link: Link): Promise<void> {
    if (link.versionChecked) return;
    const version = await this.deps.chargers.localListVersion(chargerId);
    link.versionChecked = true;
    if (version === null) {
      if (link.capability) link.capability.listSupported = false;
      return;
    }
    const held = this.deps.store.held(chargerId);
    if (held === null || held.fullWanted) return;
    const emptyAsZero = version === 0 && held.entries.size === 0;
    if (version !== held.version && !emptyAsZero) {
      this.deps.log.warn(
        { chargerId, charger: version, gateway: held.version },
        'local list version mismatch: the whole list is sent',
      );
      this.deps.store.wantFull(chargerId);
    }
  }
}
