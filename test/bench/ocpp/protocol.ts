/** The IPC between the OCPP section and its child processes (load generators, bare server). */

export type OcppVersion = 'ocpp1.6' | 'ocpp2.0.1';

export interface BenchCharger {
  id: string;
  protocol: OcppVersion;
}

/** Commands to a load generator; each is answered by one `GeneratorReply` with the same `seq`. */
export type GeneratorCommand = { seq: number } & (
  | {
      cmd: 'connect';
      /** ws://host:port/ocpp (the charger id is appended). */
      url: string;
      chargers: BenchCharger[];
      /** Basic-auth password (the bare server ignores it). */
      password: string;
      /** Connections being set up at once (the rest queue), so the listen backlog never overflows. */
      inFlight: number;
    }
  /** Bare server: every charger starts its transaction itself, with a constant idTag. */
  | { cmd: 'startOwn' }
  /** Gateway: waits until every charger has started the transaction its remote start asked for. */
  | { cmd: 'awaitStarted'; timeoutMs: number }
  /** Closed loop: each charger sends its next message as soon as the previous reply arrived. */
  | { cmd: 'saturate'; ms: number }
  /** Open loop: each charger sends one message every `intervalMs`, staggered. */
  | { cmd: 'paced'; ms: number; intervalMs: number }
  /**
   * Every connection dropped at once, as a gateway restart or a site network outage drops them;
   * each station keeps the settings the server gave it, so the next `connect` is a reconnect.
   */
  | { cmd: 'drop' }
  /**
   * Gateway: waits until the server has read every station's settings since the last `connect`
   * began (GetConfiguration / GetVariables), and tells how long after that the last read came.
   */
  | { cmd: 'settingsRead'; timeoutMs: number }
  | { cmd: 'close' }
);

/** Replies that did not mean what a working server means: a measured error is no measurement. */
export interface Faults {
  callErrors: number;
  /** CALLRESULTs refusing what was asked (boot, idTag, idToken not Accepted). */
  refused: number;
  /** Server CALLs the generator had no answer for (and answered with a CALLERROR). */
  unknownCalls: number;
  closed: number;
  /** A few examples, for the error message. */
  examples: string[];
}

export interface LoadResult {
  /** Replies received inside the window. */
  replies: number;
  windowMs: number;
  /** Reply latencies (ms) of the messages sent inside the window. */
  latenciesMs: number[];
  /** The generator's own CPU time over the window, as a fraction of one core. */
  cpuFraction: number;
}

export type GeneratorReply = { seq: number } & (
  | { ok: true; cmd: 'connect'; perConnectionMs: number[] }
  | { ok: true; cmd: 'started'; started: number; serverCalls: Record<string, number> }
  | { ok: true; cmd: 'load'; result: LoadResult }
  /** `reportedWh`: energy the chargers' last meter samples reported, all chargers together. */
  | { ok: true; cmd: 'closed'; reportedWh: number }
  | { ok: true; cmd: 'dropped' }
  | { ok: true; cmd: 'settingsRead'; lastReadMs: number }
  | { ok: false; error: string }
) & { faults: Faults };

/** The bare reference server tells its port once it listens. */
export interface BareReady {
  port: number;
}
