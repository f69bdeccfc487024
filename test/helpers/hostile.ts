import fc from 'fast-check';

/** Strings an attacker tries: injections, unicode edge cases, format strings, huge and empty. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "' OR 1=1 --",
    '"; DROP TABLE wallets; --',
    "Robert'); DELETE FROM ledger_entries;--",
    '<script>alert(1)</script>',
    '${jndi:ldap://x/a}',
    '{{7*7}}',
    '%s%s%s%n',
    '../../../../etc/passwd',
    '\u0000',
    '\u202e\u0041\u200b',
    '𝕬𝖉𝖆 🚗⚡',
    'ａｄａ＠ｆｌｅｅｔ．ｔｅｓｔ',
    '__proto__',
    'constructor',
    'NaN',
    '-0',
    '1e309',
    '9007199254740993',
    '',
    ' ',
    '\r\n\r\n',
  ),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
);

/** Any JSON value, weighted towards wrong types and extreme numbers. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.constantFrom(
    0,
    -1,
    1.5,
    Number.MAX_SAFE_INTEGER,
    Number.MAX_SAFE_INTEGER + 2,
    -Number.MAX_VALUE,
    1e308,
    5e-324,
    true,
    false,
    null,
  ),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.array(fc.oneof(fc.integer(), hostileString), { maxLength: 3 }),
  fc.dictionary(hostileString, fc.oneof(fc.integer(), hostileString), { maxKeys: 3 }),
  fc.constant({ __proto__: { admin: true } }),
);
