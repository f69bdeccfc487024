/**
 * How a token bound to a driver (an RFID card, a vehicle's identifier) is recognised whatever form
 * a charger sends it in. Pure: the same function keys a token when it is bound and when a charger
 * presents it, so two forms of one card meet on one key and the schema's unique key refuses a card
 * bound twice.
 *
 * The classes of deviation it absorbs (docs/driver-tokens.md):
 * - case: OCPP compares identifiers case-insensitively (1.6 CiString20, 2.0.1 idToken); only ASCII
 *   letters fold, so no other character can become another token's;
 * - padding: spaces and NULs around the value (readers that fill the 20-character field);
 * - hex UIDs written with separators (`04:A2:3B:1C`, `04-a2-3b-1c`, `04 A2 3B 1C`) or zero-padded
 *   on the left to a fixed width: the separators and leading zeros go, so every form of one UID
 *   has one key;
 * - vehicles (AutoCharge): a `VID:` prefix before the EV's MAC address is dropped, so the MAC as a
 *   2.0.1 `MacAddress` token and as a 1.6 `VID:` idTag are one vehicle.
 * Anything else is only case-folded and trimmed.
 */

/** At least four bytes of hex, optionally separated byte by byte by one separator kind. */
const SEPARATED_HEX = /^[0-9A-Fa-f]{2}(?:([:\- ])[0-9A-Fa-f]{2})(?:\1[0-9A-Fa-f]{2}){2,}$/;
const PLAIN_HEX = /^[0-9A-Fa-f]{8,}$/;
const VEHICLE_PREFIX = /^VID:/i;

/** The longest key kept: a 2.0.1 idToken is at most 36 characters. */
export const MAX_TOKEN_LENGTH = 36;

export function boundTokenKey(raw: string): string {
  let value = trimPadding(raw);
  value = value.replace(VEHICLE_PREFIX, '');
  if (SEPARATED_HEX.test(value)) value = value.replace(/[:\- ]/g, '');
  const upper = value.replace(/[a-z]+/g, (letters) => letters.toUpperCase());
  if (PLAIN_HEX.test(upper)) {
    const stripped = upper.replace(/^0+/, '');
    return stripped === '' ? '0' : stripped;
  }
  return upper;
}

/** Spaces and NULs around a value: firmware that pads the field to its full width. */
export function trimPadding(raw: string): string {
  return raw.replace(/^[\s\0]+|[\s\0]+$/g, '');
}

/** What a token shows on a page, a log line or an MQTT event: its last four characters. */
export function maskToken(key: string): string {
  const tail = key.slice(-4);
  return `${'•'.repeat(Math.max(2, Math.min(8, key.length - tail.length)))}${tail}`;
}

/** True when the key looks like a vehicle identifier (a MAC address: 12 hex digits, or fewer after leading zeros). */
export function looksLikeVehicle(raw: string): boolean {
  return VEHICLE_PREFIX.test(trimPadding(raw));
}
