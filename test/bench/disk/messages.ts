/** Messages between the disk section and its children (test/bench/disk/). */

/** The site's traffic, as a real site makes it: every figure here is the section's, in one place. */
export interface SiteTraffic {
  /** Seconds between a charging session's meter samples. */
  sampleSeconds: number;
  /** Seconds between a charger's heartbeats (the gateway's default `heartbeatIntervalSeconds`). */
  heartbeatSeconds: number;
  /** Seconds between a connector's repeated StatusNotification. */
  statusSeconds: number;
  /** Wh a sample's register moves by (7.4 kW for `sampleSeconds`). */
  whPerSample: number;
}

export type SiteRequest =
  | { connect: { ocppUrl: string; chargers: { id: string; protocol: '1.6' | '2.0.1' }[] } }
  /** How many transactions the stations have begun so far. */
  | { started: true }
  /** Runs the site's traffic for `seconds`, then answers with what was sent. */
  | { window: { seconds: number; traffic: SiteTraffic } }
  /** Session lives one after another on these chargers' connector 1, each started by the section. */
  | { life: { chargerId: string; samples: number; sampleMs: number } }
  /** These chargers start a transaction on connector 1 on their own (a server that sends no remote start). */
  | { startOwn: { chargers: string[] } };

export interface SiteReady {
  connected: number;
}

export interface SiteStarted {
  started: number;
}

export interface SiteSent {
  samples: number;
  heartbeats: number;
  statuses: number;
}

export interface LifeDone {
  samples: number;
}

export interface BareRequest {
  dbPath: string;
  sessions: number;
  seconds: number;
  traffic: SiteTraffic;
}

export interface BareResult {
  samples: number;
  writeBytes: number;
}
