import { z } from 'zod';
import {
  DEFAULT_WRITABLE_CONFIG,
  GATEWAY_MANAGED_CONFIG,
  isGatewayManaged,
} from './charger-config-keys.js';
import { powerInputsShape } from './power-inputs-schema.js';
import { WEEKDAYS } from '../shared/local-time.js';
import { hhmm } from '../shared/time-of-day.js';

const id = z
  .string()
  .min(1)
  .max(48)
  .regex(/^[A-Za-z0-9._:-]+$/, 'letters, digits and . _ : - only');

const connector = z
  .object({
    /** The identifier the API and the QR-code app use. */
    id: z.string().min(1).max(32),
    /** OCPP 1.6 connectorId for this connector; defaults to `id` when that is a positive integer. */
    ocppConnectorId: z.number().int().positive().optional(),
    tariff: z.string().min(1),
    /**
     * The most power the connector can deliver, kW. Energy is only billed when it fits in this
     * power (plus 10%) over the time that passed (docs: plausibility rule). Without it, `type`
     * decides: AC 22 kW, DC 400 kW; without either, 400 kW. It is also the most site power
     * allocation gives it. Simulators running N times faster than real time:
     * `simulation.timeFactor`.
     */
    maxPowerKw: z.number().positive().max(1_000_000_000).optional(),
    type: z.enum(['AC', 'DC']).optional(),
    /**
     * Site power (with `power`): the least power worth sending this connector, kW. A
     * session that cannot get it waits at 0 W rather than trickle (docs/load-management.md).
     */
    minPowerKw: z.number().min(0).max(1_000_000).optional(),
    /** AC: the most current per phase, A; with `phases` and `power.voltage` it caps the connector's power. */
    maxCurrentA: z.number().positive().max(10_000).optional(),
    /** AC phases the connector draws on (1 or 3); default 3. */
    phases: z.union([z.literal(1), z.literal(3)]).optional(),
  })
  .strict()
  .refine(
    (c) => c.minPowerKw === undefined || c.maxPowerKw === undefined || c.minPowerKw <= c.maxPowerKw,
    {
      message: 'minPowerKw is above maxPowerKw',
      path: ['minPowerKw'],
    },
  );

const charger = z
  .object({
    id,
    /**
     * OCPP security profile: 1 basic auth, 2 TLS + basic auth, 3 TLS with a client certificate
     * whose subject CN is the charger id.
     */
    securityProfile: z.union([z.literal(1), z.literal(2), z.literal(3)]).default(1),
    /**
     * Stored form of the charger's OCPP basic-auth password: a scrypt hash of a chosen password
     * (`fleet-gateway hash-password`) or the hash of a generated key (`fleet-gateway charger-key`).
     * Required for profiles 1 and 2; optional for profile 3 (then the password is checked too).
     */
    passwordHash: z
      .string()
      .regex(
        /^(scrypt|hmac-sha256)\$/,
        'must be a hash from `fleet-gateway hash-password` or `fleet-gateway charger-key`',
      )
      .optional(),
    connectors: z.array(connector).min(1),
  })
  .strict()
  .refine((c) => c.securityProfile === 3 || c.passwordHash !== undefined, {
    message: 'required for security profiles 1 and 2',
    path: ['passwordHash'],
  });

/** NGN per kWh, at most 3 decimals. */
const pricePerKwh = z.number().positive().max(1_000_000);

/** A time-of-day price: the power schedule's days and times (site.power.schedule). */
const tariffWindow = z
  .object({ days: z.array(z.enum(WEEKDAYS)).min(1).max(7), from: hhmm, to: hhmm, pricePerKwh })
  .strict();

const tariff = z
  .object({
    pricePerKwh,
    /**
     * Time-of-day prices in the site's time zone (site.timeZone); outside them, pricePerKwh.
     * Windows of one tariff may not overlap (docs/money.md, "Tariffs").
     */
    windows: z.array(tariffWindow).max(100).default([]),
  })
  .strict();

/** A file path (PEM); relative paths are resolved against the config file's folder. */
const pemFile = z.string().min(1).max(4096);

/**
 * A server's certificate and private key (PEM files), or `certificates`, several such pairs served
 * side by side: an ECDSA and an RSA one, so a charger that offers only the suites of one key type
 * still connects (OCPP 2.0.1 A00.FR.318; docs/security.md, "TLS").
 */
const serverTls = {
  cert: pemFile.optional(),
  key: pemFile.optional(),
  certificates: z
    .array(z.object({ cert: pemFile, key: pemFile }).strict())
    .min(1)
    .max(4)
    .optional(),
};

/** One of the two forms of serverTls, complete. */
function oneCertificateForm(t: { cert?: string; key?: string; certificates?: unknown[] }): boolean {
  return t.certificates === undefined
    ? t.cert !== undefined && t.key !== undefined
    : t.cert === undefined && t.key === undefined;
}
const certificateForm = {
  message: 'give cert and key, or certificates (a list of cert and key), not both',
};

/** Requests per minute for one credential, with a burst of the same size. */
const perMinute = z.number().int().min(1).max(1_000_000);

const uplink = z
  .object({
    /** Broker URL; without it the uplink is off and the outbox keeps queueing. */
    url: z
      .string()
      .regex(/^(mqtts?|wss?):\/\/[^\s/@]+(\/\S*)?$/, {
        message:
          'an mqtt://, mqtts://, ws:// or wss:// URL without credentials (use uplink.username/password)',
      })
      .optional(),
    /** Fixed client id of the persistent session; default fleetgw-<siteId>. */
    clientId: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[A-Za-z0-9._:-]+$/, 'letters, digits and . _ : - only')
      .optional(),
    username: z.string().min(1).max(256).optional(),
    password: z.string().min(1).max(1024).optional(),
    tls: z
      .object({ ca: pemFile.optional(), cert: pemFile.optional(), key: pemFile.optional() })
      .strict()
      .refine((t) => (t.cert === undefined) === (t.key === undefined), {
        message: 'cert and key go together',
      })
      .optional(),
    /** Every topic starts with this; default fleetgw/<siteId>/. */
    topicPrefix: z
      .string()
      .min(2)
      .max(200)
      .regex(/^[^+#$\s][^+#\s]*\/$/, 'no + # whitespace or leading $, and ending in /')
      .optional(),
    keepaliveSeconds: z.number().int().min(5).max(3600).default(30),
    reconnectSeconds: z.number().min(0.1).max(300).default(5),
    outbox: z
      .object({
        /** Published rows are deleted this long after the broker acknowledged them. */
        sentRetentionHours: z.number().min(0).max(8760).default(168),
        /** Unsent rows are never dropped; from this many the log warns (every minute). */
        warnDepth: z.number().int().min(1).max(100_000_000).default(10_000),
        /** From this many unsent rows the log writes an error line (every minute). */
        errorDepth: z.number().int().min(1).max(100_000_000).default(100_000),
        /** The oldest unsent row this old: a warning (the cloud is that far behind). */
        warnAgeMinutes: z.number().min(1).max(525_600).default(15),
        /** The oldest unsent row this old: an error line. */
        errorAgeMinutes: z.number().min(1).max(525_600).default(240),
      })
      .strict()
      .prefault({}),
    /** A telematics SoC older than this is not used for a quote. */
    telematicsMaxAgeMinutes: z.number().int().min(1).max(10_080).default(60),
  })
  .strict()
  .refine((u) => u.password === undefined || u.username !== undefined, {
    message: 'a password needs uplink.username',
    path: ['password'],
  });

/** A limit in kW, or in A per phase (with the site's phases and voltage); exactly one. */
const limitFields = {
  limitKw: z.number().positive().max(1_000_000).optional(),
  limitA: z.number().positive().max(100_000).optional(),
};
const oneLimit = (l: { limitKw?: number | undefined; limitA?: number | undefined }): boolean =>
  (l.limitKw === undefined) !== (l.limitA === undefined);
const oneLimitMessage = { message: 'give exactly one of limitKw and limitA', path: ['limitKw'] };

/** A group of connectors behind one breaker or feeder, nested under the site or another circuit. */
export interface CircuitConfig {
  id: string;
  limitKw?: number | undefined;
  limitA?: number | undefined;
  /** "CHARGER/CONNECTOR" ids of the connectors wired to this circuit directly. */
  connectors: string[];
  circuits: CircuitConfig[];
}
const circuit: z.ZodType<CircuitConfig, z.input<z.ZodType<CircuitConfig>>> = z.lazy(() =>
  z
    .object({
      id,
      ...limitFields,
      connectors: z
        .array(z.string().regex(/^[^/\s]+\/[^/\s]+$/, 'a "CHARGER/CONNECTOR" id'))
        .max(10_000)
        .default([]),
      circuits: z.array(circuit).max(1000).default([]),
    })
    .strict()
    .refine(oneLimit, oneLimitMessage),
);

/**
 * Site power: the site's supply limit and its circuits. Without it the gateway sends no
 * charging profile and every charger draws what it can (docs/load-management.md).
 */
const power = z
  .object({
    ...limitFields,
    /** With limitA (and AC connectors' maxCurrentA): the phases and phase voltage. */
    phases: z.union([z.literal(1), z.literal(3)]).default(3),
    voltage: z.number().min(100).max(1000).default(230),
    /** equal: the same share each; owed-weighted: shares in proportion to the energy still owed. */
    policy: z.enum(['equal', 'owed-weighted']).default('equal'),
    circuits: z.array(circuit).max(1000).default([]),
    /** Run-time limits: schedule windows and the MQTT feed (docs/load-management.md). */
    ...powerInputsShape,
  })
  .strict()
  .refine(oneLimit, oneLimitMessage);

export type PowerConfig = z.output<typeof power>;

function validTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/**
 * Alerts (docs/alerts.md): conditions watched every `checkSeconds`, each raised once after it has
 * held `raiseAfterSeconds` (offline: `chargerOfflineSeconds`) and cleared once after it has been
 * gone `clearAfterSeconds`. Without this key nothing is watched.
 */
const alerts = z
  .object({
    checkSeconds: z.number().min(0.05).max(3600).default(15),
    raiseAfterSeconds: z.number().min(0).max(86_400).default(60),
    clearAfterSeconds: z.number().min(0).max(86_400).default(120),
    /** A charger without a live connection this long (also one not seen since the start). */
    chargerOfflineSeconds: z.number().min(0).max(604_800).default(300),
    /** Raise `charger_faulted` for a connector (or charger) reporting Faulted. */
    chargerFaulted: z.boolean().default(true),
    /** Raise `stop_escalated` when a stop goes past the remote stop (docs/ocpp.md). */
    stopEscalated: z.boolean().default(true),
    /** A session's recorded operator loss above this many Wh; it stays open until acknowledged. */
    operatorLossWh: z.number().int().min(0).max(100_000_000).default(1000),
    /** Unsent outbox rows from this many, or its oldest row this old. */
    outboxDepth: z.number().int().min(1).max(100_000_000).default(10_000),
    outboxAgeSeconds: z.number().min(1).max(31_536_000).default(3600),
    /** Free space on the database's file system below this percentage. */
    diskFreePercent: z.number().min(0).max(100).default(10),
    /** A listener's certificate (http.tls, ocpp.tls, operator.http.tls) expiring within this. */
    certificateDays: z.number().min(0).max(3650).default(21),
    webhook: z
      .object({
        /** Receives each raised and cleared event as a signed JSON POST (docs/alerts.md). */
        url: z.string().regex(/^https?:\/\/\S+$/, 'an http:// or https:// URL'),
        /** HMAC-SHA256 key of the X-Fleetgw-Signature header; at least 16 characters. */
        secret: z.string().min(16).max(1024),
        timeoutSeconds: z.number().min(0.05).max(120).default(10),
        /** First wait after a failed delivery; doubles per attempt up to maxRetrySeconds. */
        retrySeconds: z.number().min(0.01).max(3600).default(5),
        maxRetrySeconds: z.number().min(0.01).max(86_400).default(900),
        /** An event still undelivered this long after it happened is given up (logged). */
        giveUpHours: z.number().min(0.001).max(8760).default(72),
      })
      .strict()
      .optional(),
  })
  .strict();

export type AlertsConfig = z.output<typeof alerts>;

const ngn = z.number().int().min(1).max(100_000_000);

/**
 * What a tap of a bound card or vehicle debits (docs/driver-tokens.md "A tap pays"): `fixed` takes
 * `amount`, `quote` the full quote for the plugged vehicle; either is capped at the wallet's
 * balance and at `sessions.maxAmount`. A tap whose amount would fall below `minimum` is refused
 * (1.6 Invalid, 2.0.1 NoCredit). `offline`: whether the fleet's cards may be kept in chargers'
 * local lists, and the least balance a wallet must hold for that (docs/money.md).
 */
const tapPolicyShape = {
  mode: z.enum(['fixed', 'quote']),
  amount: ngn,
  minimum: ngn,
  offline: z
    .object({
      enabled: z.boolean().default(true),
      minBalance: z.number().int().min(0).max(100_000_000).default(5000),
    })
    .strict(),
};

const taps = z
  .object({
    default: z
      .object({
        mode: tapPolicyShape.mode.default('fixed'),
        amount: ngn.default(5000),
        minimum: ngn.default(1000),
        offline: tapPolicyShape.offline.prefault({}),
      })
      .strict()
      .refine((p) => p.mode !== 'fixed' || p.amount >= p.minimum, {
        message: 'a fixed amount below the minimum refuses every tap',
        path: ['amount'],
      })
      .prefault({}),
    /** Per fleet id: any field given replaces the default's. */
    fleets: z
      .record(
        z.string().min(1),
        z
          .object({
            ...tapPolicyShape,
            offline: z
              .object({
                enabled: z.boolean().optional(),
                minBalance: z.number().int().min(0).max(100_000_000).optional(),
              })
              .strict(),
          })
          .partial()
          .strict(),
      )
      .default({}),
  })
  .strict();

export const configSchema = z
  .object({
    siteId: id,
    http: z
      .object({
        host: z.string().min(1).default('127.0.0.1'),
        port: z.number().int().min(0).max(65535).default(8080),
        bodyLimitBytes: z.number().int().min(1024).max(1_048_576).default(16_384),
        /** Serve the API (and the OCPP WebSocket on the same port) over TLS. */
        tls: z.object(serverTls).strict().refine(oneCertificateForm, certificateForm).optional(),
        rateLimits: z
          .object({
            /** Token mints per API key per minute. */
            mintPerMinute: perMinute.default(60),
            /** Quotes and starts (together) per driver token per minute. */
            driverPerMinute: perMinute.default(60),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    /**
     * The operator API (/admin/v1). Without `http` it is served on the driver API's listener;
     * with it, on its own listener only (a site LAN address), and the driver listener has none.
     */
    operator: z
      .object({
        http: z
          .object({
            host: z.string().min(1).default('127.0.0.1'),
            port: z.number().int().min(0).max(65535).default(8081),
            tls: z
              .object(serverTls)
              .strict()
              .refine(oneCertificateForm, certificateForm)
              .optional(),
          })
          .strict()
          .optional(),
      })
      .strict()
      .prefault({}),
    ocpp: z
      .object({
        path: z
          .string()
          .regex(/^\/[A-Za-z0-9/_-]*[A-Za-z0-9_-]$/, 'an absolute path such as /ocpp')
          .default('/ocpp'),
        heartbeatIntervalSeconds: z.number().int().min(10).max(86_400).default(300),
        meterSampleIntervalSeconds: z.number().int().min(1).max(3600).default(15),
        callTimeoutSeconds: z.number().positive().max(120).default(15),
        /**
         * A second, TLS-only listener for chargers (wss://): security profiles 2 and 3. With `ca`
         * it asks every charger for a client certificate (profile 3 chargers must present one).
         */
        tls: z
          .object({
            host: z.string().min(1).optional(),
            port: z.number().int().min(0).max(65535),
            ...serverTls,
            ca: pemFile.optional(),
          })
          .strict()
          .refine(oneCertificateForm, certificateForm)
          .optional(),
        /** Largest WebSocket frame a charger may send; a larger one closes the connection (1009). */
        maxFrameBytes: z.number().int().min(1024).max(16_777_216).default(65_536),
        /** A link silent this long is pinged; silent as long again (no frame, no pong), dropped. */
        pingIntervalSeconds: z.number().int().min(1).max(3600).default(30),
        /** Messages a charger may send: a bucket of `burst`, refilled at `perSecond`. */
        messageRate: z
          .object({
            perSecond: z.number().positive().max(10_000).default(20),
            burst: z.number().int().min(1).max(100_000).default(500),
          })
          .strict()
          .prefault({}),
        /** Failed admissions from one address wait this long before their refusal, doubling. */
        authFailureDelay: z
          .object({
            initialMilliseconds: z.number().int().min(0).max(60_000).default(500),
            maxMilliseconds: z.number().int().min(0).max(600_000).default(10_000),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    database: z
      .object({
        /** Relative paths are resolved against the config file's folder. */
        path: z.string().min(1).default('data/gateway.db'),
        /**
         * SQLite's page cache in KiB. Sized for a mini PC: the rows a site's work touches fit, and
         * the kernel's file cache holds the rest; a big site's console reads of long history
         * gain from more (docs/install.md, "Memory").
         */
        cacheKiB: z.number().int().min(256).max(4_194_304).default(2048),
      })
      .strict()
      .prefault({}),
    tokens: z
      .object({
        driverTokenTtlSeconds: z.number().int().min(60).max(86_400).default(900),
        /** Default overlap of `api-key rotate`: how long the old and the new key both work. */
        apiKeyOverlapHours: z.number().min(0).max(8760).default(24),
      })
      .strict()
      .prefault({}),
    sessions: z
      .object({
        /** How long a driver has after a successful Start for the EV to begin charging. */
        startTimeoutSeconds: z.number().positive().max(3600).default(120),
        maxAmount: z.number().int().min(1).max(100_000_000).default(500_000),
        /** Send the paid-energy stop this long before the predicted moment, to cover latency. */
        stopLeadMilliseconds: z.number().int().min(0).max(60_000).default(250),
        /**
         * A charger that reports the session's connector Available without ending the transaction
         * gets this long for its stop message before the session is settled on the last register.
         */
        stopGraceSeconds: z.number().positive().max(86_400).default(60),
        /**
         * A session whose transaction the gateway has heard nothing of for this long (no meter
         * value, no stop, charger possibly offline) is settled on the last register it proved.
         */
        // At most a week: a longer wait would hold the driver's change for too long (and overflow a timer).
        settleAfterSilenceSeconds: z
          .number()
          .positive()
          .max(7 * 86_400)
          .default(86_400),
        /** First pause before a refused or undelivered stop is sent again; doubles up to a minute. */
        stopRetrySeconds: z.number().positive().max(60).default(2),
        /**
         * After the charger accepted a stop step, the gateway checks whether energy kept rising
         * (and takes the next step of the ladder, docs/ocpp.md) after two meter sample intervals,
         * at least 5 s: this is the longest it waits.
         */
        stopVerifySeconds: z.number().positive().max(3600).default(60),
        /**
         * After a restart, how long a session whose charger has not reconnected waits for it
         * before the rules that end it without the charger (start timeout refund) apply.
         */
        recoveryWaitSeconds: z.number().min(0).max(86_400).default(600),
      })
      .strict()
      .prefault({}),
    /** What a paid session's driver is told on the charger's screen (docs/driver-tokens.md). */
    screens: z
      .object({
        /** Off: nothing is sent to any charger's screen. */
        enabled: z.boolean().default(true),
        /** A session's running cost goes to its charger at most this often (on its samples). */
        runningCostSeconds: z.number().int().min(1).max(3600).default(30),
      })
      .strict()
      .prefault({}),
    /**
     * The chargers' local authorization lists and caches (docs/driver-tokens.md#local-lists-and-the-cache):
     * the bound tokens whose wallet can pay a tap, kept in step on every charger that has a list.
     */
    localLists: z
      .object({
        enabled: z.boolean().default(true),
        /**
         * Let chargers start from their list while offline (LocalAuthorizeOffline): an exposure.
         * On, a card is Accepted on the lists only where its fleet's tap policy allows offline
         * starts and its wallet holds the policy's offline minBalance (and its minimum).
         */
        offlineStarts: z.boolean().default(false),
        /** Entries a list holds at most where the charger does not say (2.0.1 never does). */
        maxEntries: z.number().int().min(1).max(100_000).default(1000),
        /** How often the wanted list is compared with what each charger holds. */
        pollSeconds: z.number().positive().max(3600).default(5),
        /** Chargers updated at once; the others wait for the next round. */
        concurrency: z.number().int().min(1).max(64).default(4),
        /** First wait after a failed update; doubles up to maxRetrySeconds. */
        retrySeconds: z.number().positive().max(3600).default(10),
        maxRetrySeconds: z.number().positive().max(86_400).default(600),
      })
      .strict()
      .prefault({}),
    pricing: z
      .object({
        chargingEfficiencyPercent: z.number().int().min(50).max(100).default(90),
        defaultVehicle: z
          .object({
            model: z.string().min(1).max(100),
            batteryKwh: z.number().positive().max(1000),
          })
          .strict()
          .default({ model: 'Unknown vehicle', batteryKwh: 60 }),
        /**
         * Where tariffs live. config: the file is the truth, written over the database at every
         * start, and the operator API only reads them. database: the operator API, CLI and console
         * change them at run time; the file only seeds tariffs the database does not hold.
         */
        tariffSource: z.enum(['config', 'database']).default('config'),
      })
      .strict()
      .prefault({}),
    /** What operators may do to chargers through /admin/v1 beyond the fixed commands. */
    chargerOperations: z
      .object({
        /**
         * Configuration an operator may change: 1.6 key names and 2.0.1 `Component.Variable`
         * names, compared exactly (1.6 keys case-insensitively, as chargers do). The settings the
         * gateway itself applies (meter sampling, connection timeout) are never on it.
         */
        writableConfig: z
          .array(z.string().min(1).max(120))
          .max(200)
          .default([...DEFAULT_WRITABLE_CONFIG])
          .refine((keys) => keys.every((k) => !isGatewayManaged(k)), {
            message: `the gateway manages ${GATEWAY_MANAGED_CONFIG.join(', ')} itself`,
          }),
      })
      .strict()
      .prefault({}),
    /**
     * Firmware the gateway serves to chargers and the diagnostics and logs they upload to it, on
     * the operator listener (docs/firmware-and-logs.md).
     */
    transfers: z
      .object({
        /** Where the files are kept; default `files` beside the database. */
        directory: z.string().min(1).optional(),
        /** The base URL chargers are given (the site LAN address); default the operator listener's. */
        baseUrl: z
          .url({ protocol: /^https?$/ })
          .refine((u) => !u.endsWith('/'), 'no trailing slash')
          .optional(),
        maxFirmwareBytes: z.number().int().min(1024).max(4_294_967_296).default(268_435_456),
        maxLogBytes: z.number().int().min(1024).max(1_073_741_824).default(33_554_432),
        /** How long a URL given to a charger works, from the later of the retrieve time and the request. */
        tokenMinutes: z.number().int().min(1).max(10_080).default(60),
        /** What the charger is told to do when a download or upload fails. */
        retries: z.number().int().min(0).max(10).default(3),
        retryIntervalSeconds: z.number().int().min(1).max(3600).default(60),
        /**
         * A job whose charger says nothing this long (from its latest status, or the firmware's
         * retrieve time if later) ends `TimedOut`: its URL is no longer served.
         */
        jobTimeoutMinutes: z.number().int().min(5).max(43_200).default(1440),
      })
      .strict()
      .prefault({}),
    /** Prometheus metrics at /metrics; off unless a bearer token's hash is configured. */
    metrics: z
      .object({
        /** SHA-256 (hex) of the scraper's bearer token: `printf %s "$TOKEN" | sha256sum`. */
        bearerTokenSha256: z
          .string()
          .regex(/^[0-9a-f]{64}$/, 'the hex SHA-256 of the token')
          .optional(),
      })
      .strict()
      .prefault({}),
    tariffs: z.record(z.string().min(1), tariff),
    chargers: z.array(charger),
    taps: taps.prefault({}),
    power: power.optional(),
    uplink: uplink.prefault({}),
    alerts: alerts.optional(),
    /** How long rows that only grow are kept (days; 0 keeps them forever). Money rows are never pruned. */
    retention: z
      .object({
        /** Odd or refused charger messages kept for the operator (ocpp_events). */
        ocppEventsDays: z.number().min(0).max(3650).default(90),
        /** OCPP 2.0.1 TransactionEvents, once their session is no longer open. */
        transactionEventsDays: z.number().min(0).max(3650).default(90),
        /** Start Idempotency-Keys of settled or refunded sessions: a retry after this starts anew. */
        idempotencyKeysDays: z.number().min(0).max(3650).default(30),
        /** Ids of applied uplink commands: a redelivery after this is applied again (top-ups and
         *  adjustments are still applied once: the ledger keeps their reference forever). */
        uplinkCommandsDays: z.number().min(0).max(3650).default(30),
        /** Alerts cleared this long ago (never an open one, nor one about a session). */
        alertsDays: z.number().min(0).max(3650).default(365),
        /** Webhook events delivered or given up this long ago (never one still waiting). */
        alertDeliveriesDays: z.number().min(0).max(3650).default(90),
        /** Logs chargers uploaded, from their upload (their bytes and their listing). */
        logFilesDays: z.number().min(0).max(3650).default(90),
        /** Firmware files, from their upload or the latest update sent with them; 0: kept until deleted. */
        firmwareFilesDays: z.number().min(0).max(3650).default(0),
        /** How often the pruning job runs. */
        intervalMinutes: z.number().min(1).max(1440).default(60),
        /** Rows deleted per table per batch (one short transaction each). */
        batchRows: z.number().int().min(10).max(100_000).default(1000),
      })
      .strict()
      .prefault({}),
    shutdown: z
      .object({
        /**
         * On SIGTERM/SIGINT, refuse new Starts and wait up to this long for open sessions to end
         * before stopping; 0 stops at once (open sessions resume on restart).
         */
        drainTimeoutSeconds: z.number().min(0).max(86_400).default(0),
      })
      .strict()
      .prefault({}),
    /** The site as people see it: the console shows times in its zone. */
    site: z
      .object({
        /** IANA time zone of the site; "today" and "this month" are counted in it. */
        timeZone: z
          .string()
          .min(1)
          .refine(validTimeZone, 'an IANA time zone such as Africa/Lagos')
          .default('Africa/Lagos'),
      })
      .strict()
      .prefault({}),
    /**
     * Chargers that are simulators running N times faster than real time (demo, tests) deliver N
     * times their power per real second. `timeFactor` scales only the plausibility bound on the
     * energy they report; each connector's `maxPowerKw` stays its real power, the most site
     * power allocation gives it. Real chargers: leave it at 1.
     */
    simulation: z
      .object({ timeFactor: z.number().min(1).max(10_000).default(1) })
      .strict()
      .prefault({}),
    /** The browser console on the operator listener (/console). */
    console: z
      .object({
        /** A console login lasts this long; logout or revoking the operator ends it sooner. */
        sessionHours: z.number().positive().max(720).default(12),
      })
      .strict()
      .prefault({}),
    log: z
      .object({
        level: z
          .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
          .default('info'),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export type GatewayConfigInput = z.input<typeof configSchema>;
export type GatewayConfig = z.output<typeof configSchema>;
