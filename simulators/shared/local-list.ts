/**
 * A charger's local authorization list (1.6 Local Auth List Management, 2.0.1 D01–D03), as
 * firmware keeps it: a version, tokens matched case-insensitively with their status and expiry,
 * full and differential updates within a maximum length. The simulators answer SendLocalList and
 * GetLocalListVersion from it and start from it while their link is down.
 */

export type ListUpdateType = 'Full' | 'Differential';
export type ListUpdateStatus = 'Accepted' | 'Failed' | 'VersionMismatch';

/** One entry of an update, in either protocol's words: no status removes it (differential). */
export interface ListUpdateEntry {
  token: string;
  /** 2.0.1 IdTokenType (1.6 has none). */
  type?: string;
  status?: string;
  expiresAt?: string;
}

export interface LocalListEntry {
  token: string;
  type?: string;
  status: string;
  expiresAt?: string;
}

/** What a token presented while offline is by the list: undefined when it is not on it. */
export type LocalVerdict = 'Accepted' | 'Blocked' | 'Expired' | 'Invalid';

export class LocalAuthList {
  private listVersion = 0;
  private readonly entries = new Map<string, LocalListEntry>();

  constructor(readonly maxLength: number) {}

  get version(): number {
    return this.listVersion;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The list's entries, for tests and the CLI. */
  snapshot(): LocalListEntry[] {
    return [...this.entries.values()].map((e) => ({ ...e }));
  }

  /**
   * Applies an update as firmware does: a differential one must raise the version, the list may
   * not outgrow its maximum, and a refused update leaves the list as it was.
   */
  apply(type: ListUpdateType, version: number, list: readonly ListUpdateEntry[]): ListUpdateStatus {
    if (type === 'Differential' && version <= this.listVersion) return 'VersionMismatch';
    const next = type === 'Full' ? new Map<string, LocalListEntry>() : new Map(this.entries);
    for (const e of list) {
      const key = e.token.toUpperCase();
      if (e.status === undefined) {
        if (type === 'Full') return 'Failed';
        next.delete(key);
      } else {
        next.set(key, {
          token: e.token,
          ...(e.type === undefined ? {} : { type: e.type }),
          status: e.status,
          ...(e.expiresAt === undefined ? {} : { expiresAt: e.expiresAt }),
        });
      }
    }
    if (next.size > this.maxLength) return 'Failed';
    this.entries.clear();
    for (const [k, v] of next) this.entries.set(k, v);
    this.listVersion = type === 'Full' && next.size === 0 ? 0 : version;
    return 'Accepted';
  }

  /** The token's entry, matched case-insensitively. */
  entry(token: string): LocalListEntry | undefined {
    const entry = this.entries.get(token.toUpperCase());
    return entry && { ...entry };
  }

  /** The token's status by the list at `nowMs` (an entry past its expiry is Expired). */
  verdict(token: string, nowMs: number): LocalVerdict | undefined {
    const entry = this.entries.get(token.toUpperCase());
    if (!entry) return undefined;
    if (entry.expiresAt !== undefined && Date.parse(entry.expiresAt) <= nowMs) return 'Expired';
    const { status } = entry;
    return status === 'Accepted' || status === 'Blocked' || status === 'Expired'
      ? status
      : 'Invalid';
  }
}
