import { ChargerOfflineError } from '../port.js';
import type { ChargerAdapter } from '../protocol-adapter.js';
import type { RpcClient } from './rpc.js';

/** One charger's live WebSocket link, with the adapter that speaks its protocol on it. */
export interface Connection {
  client: RpcClient & {
    close(options?: { code?: number; reason?: string }): Promise<unknown>;
  };
  adapter: ChargerAdapter;
  protocol: string;
}

/** The live connection of each charger: one at a time (a newer one replaces an older one). */
export class Connections {
  private readonly byCharger = new Map<string, Connection>();

  get(chargerId: string): Connection | undefined {
    return this.byCharger.get(chargerId);
  }

  has(chargerId: string): boolean {
    return this.byCharger.has(chargerId);
  }

  /** The charger's connection; ChargerOfflineError when it has none (nothing is queued). */
  live(chargerId: string): Connection {
    const connection = this.byCharger.get(chargerId);
    if (!connection) throw new ChargerOfflineError(`charger ${chargerId} is not connected`);
    return connection;
  }

  set(chargerId: string, connection: Connection): void {
    this.byCharger.set(chargerId, connection);
  }

  /** Forgets the charger's connection if it is still `connection` (not a newer one); says so. */
  ended(chargerId: string, connection: Connection): boolean {
    if (this.byCharger.get(chargerId) !== connection) return false;
    this.byCharger.delete(chargerId);
    return true;
  }

  clear(): void {
    this.byCharger.clear();
  }

  get size(): number {
    return this.byCharger.size;
  }

  /** Connected chargers per OCPP protocol. */
  byProtocol(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const { protocol } of this.byCharger.values()) {
      counts.set(protocol, (counts.get(protocol) ?? 0) + 1);
    }
    return counts;
  }
}
