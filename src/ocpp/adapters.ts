import type { FrameNormalizer } from './connection/edge.js';
import type { ProtocolAdapter } from './protocol-adapter.js';
import { Adapter16 } from './v16/adapter.js';
import { normalize16 } from './v16/normalize.js';
import { Adapter201 } from './v201/adapter.js';
import { normalize201 } from './v201/normalize.js';
import { Adapter21 } from './v21/adapter.js';
import { normalize21 } from './v21/normalize.js';

/**
 * The OCPP versions the central system speaks, each with its adapter. The only place that knows
 * which versions exist; everything past the adapter is version-neutral.
 */
export const ADAPTERS: ReadonlyMap<string, ProtocolAdapter> = new Map<string, ProtocolAdapter>([
  ['ocpp2.1', (ctx) => new Adapter21(ctx)],
  ['ocpp2.0.1', (ctx) => new Adapter201(ctx)],
  ['ocpp1.6', (ctx) => new Adapter16(ctx)],
]);

/** Each version's tolerant reading of charger frames (its normalize.ts). */
export const NORMALIZERS: ReadonlyMap<string, FrameNormalizer> = new Map([
  ['ocpp2.1', normalize21],
  ['ocpp2.0.1', normalize201],
  ['ocpp1.6', normalize16],
]);

/** What a charger that offers no subprotocol speaks: 1.6J, as such chargers do in the field. */
export const ASSUMED_PROTOCOL = 'ocpp1.6';

/** The first protocol in the charger's own order of preference that we speak. */
export function pickProtocol(offered: Iterable<string>): string | undefined {
  for (const protocol of offered) if (ADAPTERS.has(protocol)) return protocol;
  return undefined;
}
