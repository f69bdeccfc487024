/**
 * A driver's identifier as chargers pad it. Firmware that keeps an idTag in a fixed-width buffer
 * (1.6 CiString20Type, 2.0.1 identifierString up to 36) may send the buffer whole: the identifier
 * followed (or, right-aligned, preceded) by spaces or NULs. That padding is not part of the
 * identifier; what is inside it always is: nothing between two characters is removed, and an
 * identifier is never cut to fit, so no repair can turn one identifier into another.
 */

const PADDING = /^[\s\0]+|[\s\0]+$/g;
const PADDED = /^[\s\0]|[\s\0]$/;

export function isPadded(identifier: string): boolean {
  return PADDED.test(identifier);
}

export function unpadded(identifier: string): string {
  return identifier.replace(PADDING, '');
}

/**
 * Whether a call holds a padded driver identifier where the messages carry one (1.6 `idTag`,
 * 2.0.1 `idToken.idToken` and `groupIdToken.idToken`): then a call that is schema-valid as it is
 * still goes through the repair, which drops the padding and counts it.
 */
export function holdsPaddedIdentifier(params: unknown): boolean {
  if (typeof params !== 'object' || params === null) return false;
  const p = params as { idTag?: unknown; idToken?: unknown; groupIdToken?: unknown };
  const padded = (v: unknown): boolean => typeof v === 'string' && isPadded(v);
  const inner = (v: unknown): unknown =>
    typeof v === 'object' && v !== null ? (v as { idToken?: unknown }).idToken : undefined;
  return padded(p.idTag) || padded(inner(p.idToken)) || padded(inner(p.groupIdToken));
}
