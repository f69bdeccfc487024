import type { OcppProtocol } from './rpc-client.js';

/**
 * Firmware personalities: the ways real chargers deviate from the spec's examples, named by
 * behaviour. A charger can have several; the default (none) is the well-behaved charger.
 * `both` is 1.6 and the 2.0.1 family: 2.1 is a superset of 2.0.1's message model, so what a
 * 2.0.1 station can do wrong a 2.1 station can too. `keepsSchema`: a behaviour only, every frame
 * stays schema-valid, so the charger keeps validating its own frames in strict mode.
 */
export const PERSONALITIES = {
  'numeric-values': { protocols: ['ocpp1.6'], about: '1.6 sampled values as JSON numbers' },
  'lowercase-units': { protocols: 'both', about: 'energy and power units in lower case (wh, kwh)' },
  'decimal-meter-start': { protocols: ['ocpp1.6'], about: 'meterStart with a decimal fraction' },
  'vendor-fields': { protocols: 'both', about: 'extra fields in requests and CALLRESULTs' },
  'vendor-stop-reason': { protocols: 'both', about: 'stop reasons outside the enumeration' },
  'no-txid-meter': { protocols: ['ocpp1.6'], about: 'MeterValues without transactionId' },
  'connector-zero-meter': { protocols: ['ocpp1.6'], about: 'transaction samples on connector 0' },
  'register-only': { protocols: 'both', about: 'samples only the register; refuses other lists' },
  'interval-energy': {
    protocols: 'both',
    about: 'Energy.Active.Import.Interval, not the register',
  },
  'per-phase': { protocols: 'both', about: 'energy and power as L1/L2/L3 values, no total' },
  'kwh-register': { protocols: 'both', about: 'the register in kWh' },
  'no-meter-start': { protocols: 'both', about: '1.6 meterStart 0; 2.0.1 Started without meter' },
  'no-energy': { protocols: 'both', about: 'no energy in samples during the transaction' },
  'clock-skew': { protocols: 'both', about: 'clock off by hours (clock-skew=<hours>, default 2)' },
  'no-millis-timestamps': { protocols: 'both', about: 'timestamps without milliseconds' },
  'queued-burst': { protocols: 'both', about: "queues samples 'offline', replays them in a burst" },
  'ignores-stop': { protocols: 'both', about: 'answers remote stops Accepted, keeps charging' },
  'rejects-stop': { protocols: 'both', about: 'answers remote stops Rejected' },
  'ignores-profile': { protocols: 'both', about: 'accepts SetChargingProfile, ignores it' },
  'obeys-profile': {
    protocols: 'both',
    about: 'applies charging profiles (every charger now does; the name stays for scripts)',
  },
  'rejects-profiles': { protocols: 'both', about: 'answers SetChargingProfile Rejected' },
  'profiles-not-supported': {
    protocols: 'both',
    about: 'no Smart Charging: profile calls get a CALLERROR NotImplemented',
  },
  'forgets-transaction-on-reboot': {
    protocols: 'both',
    about: 'after a reset or power cut, never reports the end of the running transaction',
  },
  'local-start': {
    protocols: 'both',
    about: 'starts with its own RFID idTag at plug-in (local-start=<idTag>)',
  },
  'late-finishing': { protocols: ['ocpp1.6'], about: 'Finishing only after StopTransaction' },
  'cost-screen': {
    protocols: 'both',
    about: 'a driver display: advertises the cost messages, shows (emits) what it is told',
  },
  'interval-after-reboot': {
    protocols: 'both',
    about: 'a new sample interval answers RebootRequired and samples at the old one until a reboot',
  },
  'skips-authorize': {
    protocols: 'both',
    about: 'a tapped card or identified vehicle starts without Authorize (judged at the start)',
  },
  'lowercase-uids': { protocols: 'both', about: "card UIDs and vehicles' MACs in lower-case hex" },
  'uid-separators': {
    protocols: 'both',
    about: "UID bytes separated (uid-separators=:|-|space, default ':')",
  },
  'uid-leading-zeros': {
    protocols: 'both',
    about: 'UIDs zero-padded on the left to a fixed width (uid-leading-zeros=<digits>, default 16)',
  },
  'padded-tokens': {
    protocols: 'both',
    about:
      'every idTag/idToken padded to its 21-byte buffer (padded-tokens=space|nul, default nul)',
  },
  'limit-ignored': {
    protocols: ['ocpp2.1'],
    about: 'confirms a transactionLimit with LimitSet and never enforces it',
    keepsSchema: true,
  },
  'limit-overshoot': {
    protocols: ['ocpp2.1'],
    about: 'enforces a transactionLimit at the first meter sample past it, not as energy flows',
    keepsSchema: true,
  },
  'no-local-cost': {
    protocols: ['ocpp2.1'],
    about: 'no local cost calculation: TariffCostCtrlr not available, tariff calls not implemented',
    keepsSchema: true,
  },
} as const satisfies Record<
  string,
  { protocols: 'both' | readonly OcppProtocol[]; about: string; keepsSchema?: true }
>;

export type PersonalityName = keyof typeof PERSONALITIES;

export const PERSONALITY_NAMES = Object.keys(PERSONALITIES) as PersonalityName[];

const DEFAULT_CLOCK_SKEW_HOURS = 2;
export const DEFAULT_LOCAL_ID_TAG = 'RFID-LOCAL-01';
/** Samples a queued-burst charger holds back before replaying them. */
export const QUEUED_BURST_SAMPLES = 3;

const CONFLICTS: readonly [PersonalityName, PersonalityName][] = [
  ['ignores-stop', 'rejects-stop'],
  ['ignores-profile', 'obeys-profile'],
  ['ignores-profile', 'rejects-profiles'],
  ['ignores-profile', 'profiles-not-supported'],
  ['rejects-profiles', 'profiles-not-supported'],
  ['obeys-profile', 'rejects-profiles'],
  ['obeys-profile', 'profiles-not-supported'],
  ['interval-energy', 'kwh-register'],
  ['no-energy', 'interval-energy'],
  ['limit-ignored', 'limit-overshoot'],
];

/** How a reader writes a UID: the separator between bytes, the width it zero-pads to. */
const UID_SEPARATORS = { ':': ':', '-': '-', space: ' ' } as const;
const DEFAULT_UID_WIDTH = 16;
/** A C buffer for a CiString20 and its terminator, sent whole. */
export const TOKEN_BUFFER_LENGTH = 21;

export interface TokenQuirks {
  /** Between the bytes of a hex UID ('' for none). */
  uidSeparator: string;
  /** Hex digits a UID is zero-padded to on the left (0: not padded). */
  uidWidth: number;
  lowercaseUids: boolean;
  /** What fills every idTag/idToken to TOKEN_BUFFER_LENGTH ('' for nothing). */
  tokenPadding: '' | ' ' | '\0';
}

/** A charger's personalities, parsed and checked against its protocol. */
export class Personality {
  readonly clockSkewMs: number;
  readonly localIdTag: string;
  readonly tokens: TokenQuirks;

  private constructor(
    private readonly names: ReadonlySet<PersonalityName>,
    clockSkewHours: number,
    localIdTag: string,
    tokens: Omit<TokenQuirks, 'lowercaseUids'> = {
      uidSeparator: '',
      uidWidth: 0,
      tokenPadding: '',
    },
  ) {
    this.clockSkewMs = names.has('clock-skew') ? clockSkewHours * 3_600_000 : 0;
    this.localIdTag = localIdTag;
    this.tokens = { ...tokens, lowercaseUids: names.has('lowercase-uids') };
  }

  static readonly none = new Personality(new Set(), 0, DEFAULT_LOCAL_ID_TAG);

  /**
   * Entries like "numeric-values", "clock-skew=-5", "local-start=CARD42"; a single string may
   * list several separated by commas. Throws a RangeError naming the offending entry.
   */
  static parse(entries: readonly string[], protocol: OcppProtocol): Personality {
    const names = new Set<PersonalityName>();
    let clockSkewHours = DEFAULT_CLOCK_SKEW_HOURS;
    let localIdTag = DEFAULT_LOCAL_ID_TAG;
    const tokens: Omit<TokenQuirks, 'lowercaseUids'> = {
      uidSeparator: '',
      uidWidth: 0,
      tokenPadding: '',
    };
    const split = entries.flatMap((entry) => entry.split(',')).map((entry) => entry.trim());
    for (const entry of split.filter((part) => part.length > 0)) {
      const equals = entry.indexOf('=');
      const name = equals < 0 ? entry : entry.slice(0, equals).trim();
      const value = equals < 0 ? undefined : entry.slice(equals + 1).trim();
      if (!isPersonalityName(name)) {
        throw new RangeError(
          `unknown personality "${name}" (known: ${PERSONALITY_NAMES.join(', ')})`,
        );
      }
      const { protocols } = PERSONALITIES[name];
      if (protocols !== 'both' && !(protocols as readonly string[]).includes(protocol)) {
        throw new RangeError(`personality ${name} applies to ${protocols.join(', ')} only`);
      }
      if (value !== undefined) {
        if (name === 'clock-skew' && value !== '' && Number.isFinite(Number(value))) {
          clockSkewHours = Number(value);
        } else if (name === 'local-start' && /^[\x21-\x7e]{1,20}$/.test(value)) {
          localIdTag = value;
        } else if (!tokenValue(name, value, tokens)) {
          throw new RangeError(`personality ${name} takes no value "${value}"`);
        }
      }
      names.add(name);
    }
    // Named without a value: the defaults.
    if (names.has('uid-separators') && tokens.uidSeparator === '') tokens.uidSeparator = ':';
    if (names.has('uid-leading-zeros') && tokens.uidWidth === 0)
      tokens.uidWidth = DEFAULT_UID_WIDTH;
    if (names.has('padded-tokens') && tokens.tokenPadding === '') tokens.tokenPadding = '\0';
    for (const [a, b] of CONFLICTS) {
      if (names.has(a) && names.has(b))
        throw new RangeError(`personalities ${a} and ${b} conflict`);
    }
    return new Personality(names, clockSkewHours, localIdTag, tokens);
  }

  has(name: PersonalityName): boolean {
    return this.names.has(name);
  }

  get list(): PersonalityName[] {
    return [...this.names];
  }

  /** The charger sends what its schema forbids, so it must not validate its own frames. */
  get bendsTheSchema(): boolean {
    return [...this.names].some((name) => !('keepsSchema' in PERSONALITIES[name]));
  }
}

/** Takes the value of a token personality into `tokens`; false when it is not one of its values. */
function tokenValue(
  name: PersonalityName,
  value: string,
  tokens: Omit<TokenQuirks, 'lowercaseUids'>,
): boolean {
  if (name === 'uid-separators' && Object.hasOwn(UID_SEPARATORS, value)) {
    tokens.uidSeparator = UID_SEPARATORS[value as keyof typeof UID_SEPARATORS];
    return true;
  }
  if (name === 'uid-leading-zeros' && /^\d{1,2}$/.test(value) && Number(value) >= 8) {
    tokens.uidWidth = Number(value);
    return true;
  }
  if (name === 'padded-tokens' && (value === 'space' || value === 'nul')) {
    tokens.tokenPadding = value === 'space' ? ' ' : '\0';
    return true;
  }
  return false;
}

export function isPersonalityName(name: string): name is PersonalityName {
  return Object.hasOwn(PERSONALITIES, name);
}
