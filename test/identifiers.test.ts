import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { idTokenKey } from '../src/charging/id-tokens.js';
import { RAW_PROTOCOLS, type RawProtocol, type RawStation } from './helpers/raw-stations.js';
import { harness } from './helpers/session-harness.js';
import { waitUntil } from './helpers/wait.js';

/**
 * A driver's identifier as chargers send it (docs/ocpp.md "Identifiers"): 1.6 idTag is a
 * CiString20 and 2.0.1 idToken is case-insensitive, so the session's one-time token is ours in any
 * case; padding of spaces or NULs around it is a charger's buffer and is dropped (and counted);
 * anything else that differs names another identifier, which is never guessed to be ours.
 */

type Variant = (token: string) => string;

/** The class: case and padding. The reported example (an idTag kept in lower case) is `lower`. */
const ACCEPTED: Record<string, Variant> = {
  lower: (t) => t.toLowerCase(),
  'mixed case': (t) => [...t].map((c, i) => (i % 2 ? c.toLowerCase() : c)).join(''),
  'padded with spaces': (t) => t.padEnd(t.length + 6, ' '),
  'padded with NULs': (t) => t.padEnd(t.length + 4, '\0'),
  'right-aligned, lower case': (t) => `  ${t.toLowerCase()}`,
};

/** What differs by more than case and padding: another identifier. */
const REFUSED: Record<string, Variant> = {
  'a space inside': (t) => `${t.slice(0, 10)} ${t.slice(11)}`,
  'one character changed': (t) => `${t.slice(0, -1)}${t.endsWith('A') ? 'B' : 'A'}`,
  'cut short': (t) => t.slice(0, -1),
  'a character more': (t) => `${t.slice(1)}A`,
};

function authorize(protocol: RawProtocol, station: RawStation, idToken: string) {
  return protocol.name === 'OCPP 1.6J'
    ? station.send({ action: 'Authorize', params: { idTag: idToken } })
    : station.send({ action: 'Authorize', params: { idToken: { idToken, type: 'Central' } } });
}

function verdict(reply: unknown): string | undefined {
  const r = reply as { idTagInfo?: { status: string }; idTokenInfo?: { status: string } };
  return (r.idTagInfo ?? r.idTokenInfo)?.status;
}

describe('identifiers: the lookup key', () => {
  it('folds ASCII letters only, so no other character becomes one of ours', () => {
    expect(idTokenKey('fg2x')).toBe('FG2X');
    expect(idTokenKey('FGſı\u212a')).toBe('FGſı\u212a');
  });
});

describe.each(RAW_PROTOCOLS)('identifiers: $name', (protocol) => {
  const h = harness({});

  it.each(Object.entries(ACCEPTED))(
    'the session token %s: Authorize and the start are Accepted, the session settles once',
    async (_name, variant) => {
      const { station, sessionId } = await h.paidSession(protocol);
      const remote = station.remoteStarts.at(-1)!;
      const sent = variant(remote.idToken);
      expect(verdict(await authorize(protocol, station, sent))).toBe('Accepted');
      // The start names the token as the charger keeps it; on 2.0.1 without the remoteStartId,
      // so the token alone must make the transaction the session's.
      remote.idToken = sent;
      delete remote.remoteStartId;
      const { tx, reply } = await station.start(10_000);
      expect(verdict(reply)).toBe('Accepted');
      await station.send(station.sample(tx, 10_600));
      expect(h.session(sessionId)).toMatchObject({ state: 'charging', last_meter_wh: 10_600 });
      await station.send(station.end(tx, 11_000, { idTag: true }));
      h.settledOnce(sessionId, 1_000);
    },
  );

  it.each(Object.entries(REFUSED))(
    'the session token with %s is another identifier: Invalid; the token itself then starts it',
    async (_name, variant) => {
      const { station, sessionId } = await h.paidSession(protocol);
      const remote = station.remoteStarts.at(-1)!;
      const token = remote.idToken;
      const sent = variant(token);
      expect(verdict(await authorize(protocol, station, sent))).toBe(unknownWord(protocol));
      remote.idToken = sent;
      delete remote.remoteStartId;
      const refused = await station.start(10_000);
      expect(verdict(refused.reply)).toBe(unknownWord(protocol));
      expect(h.session(sessionId).state).not.toBe('charging');
      remote.idToken = token;
      const { tx, reply } = await station.start(10_000);
      expect(verdict(reply)).toBe('Accepted');
      await station.send(station.end(tx, 10_500));
      h.settledOnce(sessionId, 500);
    },
  );

  it('padding is counted as a deviation of the charger, case is not', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const token = station.remoteStarts.at(-1)!.idToken;
    await authorize(protocol, station, token.toLowerCase());
    await authorize(protocol, station, `${token}\0\0`);
    const kinds = () =>
      (
        h.t.gw.db
          .prepare("SELECT kind FROM charger_deviations WHERE charger_id = 'CP-1'")
          .all() as {
          kind: string;
        }[]
      ).map((r) => r.kind);
    const padded =
      protocol.name === 'OCPP 1.6J'
        ? 'Authorize idTag identifier_padded'
        : 'Authorize idToken.idToken identifier_padded';
    await waitUntil(() => kinds().includes(padded), 5000, 'deviation');
    expect(kinds().filter((k) => k.startsWith('Authorize'))).toEqual([padded]);
    await settleOnItsToken(station, sessionId);
  });

  it('property: every case and padding variant of the token is Accepted, every other change Invalid', async () => {
    const { station, sessionId } = await h.paidSession(protocol);
    const token = station.remoteStarts.at(-1)!.idToken;
    // 1.6 allows 20 characters: padding beyond is repaired, so any length of it is allowed here.
    const pad = fc.array(fc.constantFrom(' ', '\0', '\t'), { maxLength: 8 }).map((p) => p.join(''));
    const variant = fc.record({
      lower: fc.array(fc.boolean(), { minLength: token.length, maxLength: token.length }),
      left: pad,
      right: pad,
    });
    await fc.assert(
      fc.asyncProperty(variant, async ({ lower, left, right }) => {
        const cased = [...token].map((c, i) => (lower[i] ? c.toLowerCase() : c)).join('');
        expect(verdict(await authorize(protocol, station, left + cased + right))).toBe('Accepted');
      }),
      { numRuns: 40 },
    );
    // Any change to one character that is not a change of case names another identifier.
    const change = fc.record({
      at: fc.nat({ max: token.length - 1 }),
      char: fc.constantFrom(...'ABCDEFGHJKLMNPQRSTUVWXYZ23456789 -_ſı'.split('')),
    });
    await fc.assert(
      fc.asyncProperty(change, async ({ at, char }) => {
        // Only an ASCII letter's other case is the same letter: 'ſ' is not 'S', 'ı' not 'I'.
        fc.pre(char !== token[at] && char !== token[at]!.toLowerCase());
        const sent = token.slice(0, at) + char + token.slice(at + 1);
        expect(verdict(await authorize(protocol, station, sent))).toBe(unknownWord(protocol));
      }),
      { numRuns: 40 },
    );
    await settleOnItsToken(station, sessionId);
  });

  /** Ends a test's session as a well-behaved charger would, so the next finds CP-1 free. */
  async function settleOnItsToken(station: RawStation, sessionId: string) {
    const { tx } = await station.start(10_000);
    await station.send(station.end(tx, 10_100));
    h.settledOnce(sessionId, 100);
  }
});

/** A token bound to nobody: 1.6 has no Unknown and says Invalid (docs/driver-tokens.md). */
function unknownWord(protocol: RawProtocol): string {
  return protocol.name === 'OCPP 1.6J' ? 'Invalid' : 'Unknown';
}
