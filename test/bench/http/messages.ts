/** The IPC messages between the HTTP bench sections and their child processes. */

/** One request the generator may send: the body and headers of a POST. */
export interface LoadTarget {
  body: string;
  headers: Record<string, string>;
}

export interface LoadRequest {
  url: string;
  path: string;
  connections: number;
  seconds: number;
  /** Stop after this many requests instead (then `seconds` only bounds the run). */
  amount?: number;
  /** Sent round-robin across all connections, so consecutive requests name different targets. */
  targets: LoadTarget[];
  /** Start the round-robin here (a later run continues where the last one stopped). */
  offset: number;
}

export interface LoadResult {
  /** Every response, whatever its status. */
  responses: number;
  /** 2xx responses only: the figure a bench reports as done work. */
  ok: number;
  okPerSecond: number;
  /** Over every response (autocannon's histogram), ms. */
  p50: number;
  p99: number;
  statuses: Record<string, number>;
  /** error.code of every non-2xx body. */
  codes: Record<string, number>;
  /** Socket errors and timeouts: never planned for. */
  errors: number;
  timeouts: number;
  /** Where the next run's round-robin starts. */
  nextOffset: number;
}

export interface ChargerFleetRequest {
  ocppUrl: string;
  chargers: { id: string; protocol: '1.6' | '2.0.1' }[];
  /** How long a remote-started transaction runs before the charger ends it. */
  holdMs: number;
}

export interface ChargerFleetReady {
  connected: number;
}

export interface ChargerFleetStats {
  remoteStarts: number;
  started: number;
  ended: number;
  /** Frames the gateway answered with an error, or that failed on the wire. */
  failures: number;
  firstFailure?: string;
}

export interface RawDebitRequest {
  dbPath: string;
  seconds: number;
  drivers: number;
  amount: number;
}

export interface RawDebitResult {
  transactions: number;
  perSecond: number;
  p50: number;
  p99: number;
}

export interface BareApiReady {
  url: string;
}

export interface ShellApiRequest {
  dir: string;
  drivers: number;
}

export interface ShellApiReady {
  url: string;
  /** One driver token per driver, in order, minted by the shell's own token store. */
  tokens: string[];
}

/** To the bare Start-life reference (bare-start-life.ts): set up once, then one run per round. */
export type BareLifeRequest =
  | { setup: { dbPath: string; drivers: number; amount: number; chargers: number } }
  | { run: { seconds: number; concurrency: number } };

export interface BareLifeReady {
  ocppUrl: string;
}

export interface BareLifeResult {
  /** Starts whose whole life (debit, remote start answered, settlement) ended in the window. */
  lives: number;
  perSecond: number;
}

/** To the bare reference's chargers (bare-start-chargers.ts). */
export interface BareChargersRequest {
  ocppUrl: string;
  chargers: number;
}

export interface BareChargersReady {
  connected: number;
  remoteStarts: number;
}
