import type { FrameNormalizer } from '../connection/edge.js';
import { normalizerOf201Family } from '../v201/normalize.js';

/** A 2.1 station's frames, repaired against 2.1's own schemas (its fields and enums). */
export const normalize21: FrameNormalizer = normalizerOf201Family('ocpp2.1');
