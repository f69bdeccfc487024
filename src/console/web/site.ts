import { useEffect, useMemo } from 'preact/hooks';
import { SiteAlerts } from './alerts';
import { api } from './api';
import { kw, kwh, pct, time } from './format';
import { onLive, useLiveReload, type LiveEvent } from './live';
import { OutOfServiceNote } from './out-of-service';
import {
  allocations,
  allocationText,
  loadPower,
  PowerPanel,
  type Allocation,
  type PowerState,
} from './power';
import type { ChargerView, ConnectorView, Driver, Fleet, Page, SessionRow } from './types';
import { ErrorText, html, Link, Loading, useData } from './ui';

interface Site {
  chargers: ChargerView[];
  openSessions: Map<string, SessionRow>;
  power: PowerState;
}

async function loadSite(): Promise<Site> {
  const [chargers, sessions, power] = await Promise.all([
    api.get<{ chargers: ChargerView[] }>('/chargers'),
    api.get<Page<SessionRow>>('/sessions?state=authorizing,authorized,charging,stopping&limit=200'),
    loadPower(),
  ]);
  return {
    chargers: chargers.chargers.sort((a, b) => a.chargerId.localeCompare(b.chargerId)),
    openSessions: new Map(sessions.items.map((s) => [s.sessionId, s])),
    power,
  };
}

const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);

/** The site with one pushed event applied (docs/console.md, "Server side", for the shapes). */
export function applyEvent(site: Site, e: LiveEvent): Site {
  const { chargerId, connectorId } = e.data;
  if (typeof chargerId !== 'string') return site;
  const chargers = site.chargers.map((c) => {
    if (c.chargerId !== chargerId) return c;
    if (e.type === 'charger.online') return { ...c, connected: true };
    if (e.type === 'charger.offline') return { ...c, connected: false };
    const connectors = c.connectors.map((k) => {
      if (k.connectorId !== connectorId) return k;
      if (e.type === 'connector.status' && typeof e.data.status === 'string') {
        return { ...k, status: e.data.status.toLowerCase() };
      }
      if (e.type === 'meter.sample') {
        return {
          ...k,
          powerW: num(e.data.powerW) ?? k.powerW,
          socPercent: num(e.data.socPercent) ?? k.socPercent,
        };
      }
      return k;
    });
    return { ...c, connectors };
  });
  let openSessions = site.openSessions;
  const sessionId = e.data.sessionId;
  const energy = num(e.data.sessionEnergyWh);
  if (e.type === 'meter.sample' && typeof sessionId === 'string' && energy !== null) {
    const s = openSessions.get(sessionId);
    if (s) openSessions = new Map(openSessions).set(sessionId, { ...s, energyWh: energy });
  }
  return { ...site, chargers, openSessions };
}

export function SiteView(props: { canAct: boolean }) {
  const site = useData(loadSite, 'site');
  const roster = useData(
    () =>
      Promise.all([
        api.get<{ drivers: Driver[] }>('/drivers'),
        api.get<{ fleets: Fleet[] }>('/fleets'),
      ]),
    'roster',
  );
  // A pushed sample or status shows at once; the whole site is fetched again after a burst, for
  // what events do not carry (a session's driver, an error code).
  useEffect(() => onLive((e) => site.patch((d) => applyEvent(d, e))), []);
  useLiveReload(site.reload, () => true, 1000);
  const fleetOf = useMemo(() => {
    const names = new Map(roster.data?.[1].fleets.map((f) => [f.fleetId, f.name]) ?? []);
    const m = new Map<string, string>();
    for (const d of roster.data?.[0].drivers ?? [])
      m.set(d.driverId, names.get(d.fleetId) ?? d.fleetId);
    return m;
  }, [roster.data]);

  if (!site.data)
    return html`<${ErrorText}
        error=${site.error}
      />${site.error ? null : html`<${Loading} what="the site" />`}`;
  const { chargers, openSessions, power } = site.data;
  const allocated = allocations(power);
  const online = chargers.filter((c) => c.connected).length;
  return html`
    <h1>Site</h1>
    <p class="summary">
      ${`${online} of ${chargers.length} chargers online · ${openSessions.size} ${openSessions.size === 1 ? 'session' : 'sessions'} open`}
    </p>
    <${SiteAlerts} />
    <${ErrorText} error=${site.error} />
    <${PowerPanel} state=${power} canAct=${props.canAct} onChange=${site.reload} />
    <div class="tiles">
      ${chargers.map((c) => html`<${ChargerTile} key=${c.chargerId} charger=${c} sessions=${openSessions} fleetOf=${fleetOf} allocations=${allocated} />`)}
    </div>
  `;
}

function ChargerTile(props: {
  charger: ChargerView;
  sessions: Map<string, SessionRow>;
  fleetOf: Map<string, string>;
  /** Each drawing session's share under load management; null without it. */
  allocations: Map<string, Allocation> | null;
}) {
  const c = props.charger;
  return html`
    <section class=${`tile ${c.connected ? 'online' : 'offline'}`} data-charger=${c.chargerId}>
      <header>
        <h2><${Link} href=${`/console/chargers/${encodeURIComponent(c.chargerId)}`}>${c.chargerId}</${Link}></h2>
        <span class=${`badge ${c.connected ? 'ok' : 'bad'}`}>${c.connected ? 'Online' : 'Offline'}</span>
      </header>
      <p class="muted">
        ${c.protocol ? protocolName(c.protocol) : 'never booted'}${c.model ? ` · ${c.vendor ?? ''} ${c.model}` : ''}
        ${c.connected ? null : html`<br />last heard ${time(c.lastSeenAt)}`}
      </p>
      <${OutOfServiceNote} label="The whole charger is out of service" hold=${c.outOfService} />
      ${c.connectors.map(
        (k) =>
          html`<${ConnectorRow}
            key=${k.connectorId}
            chargerId=${c.chargerId}
            connector=${k}
            session=${k.session ? props.sessions.get(k.session.sessionId) : undefined}
            fleet=${k.session ? props.fleetOf.get(k.session.driverId) : undefined}
            managed=${props.allocations !== null}
            allocation=${k.session ? props.allocations?.get(k.session.sessionId) : undefined}
          />`,
      )}
    </section>
  `;
}

export function protocolName(p: string): string {
  const names: Record<string, string> = {
    'ocpp2.1': 'OCPP 2.1',
    'ocpp2.0.1': 'OCPP 2.0.1',
    'ocpp1.6': 'OCPP 1.6J',
  };
  return names[p] ?? p;
}

function ConnectorRow(props: {
  chargerId: string;
  connector: ConnectorView;
  session?: SessionRow;
  fleet?: string;
  managed: boolean;
  allocation?: Allocation;
}) {
  const k = props.connector;
  const s = k.session;
  return html`
    <div class="connector" data-connector=${k.connectorId}>
      <div class="connector-head">
        <span>Connector ${k.connectorId}</span>
        <span class=${`status status-${k.status}`} data-status=${k.status}
          >${statusWord(k.status)}</span
        >
      </div>
      ${k.errorCode ? html`<p class="error">Error: ${k.errorCode}</p>` : null}
      <${OutOfServiceNote} label="Out of service" hold=${k.outOfService} />
      <dl class="figures">
        <div>
          <dt>Power</dt>
          <dd data-field="power">${s ? kw(k.powerW) : '–'}</dd>
        </div>
        ${
          props.managed && s
            ? html`<div>
                <dt>Allowed</dt>
                <dd
                  data-field="allocation"
                  class=${props.allocation?.state === 'allocated' ? '' : 'text'}
                >
                  ${allocationText(props.allocation)}
                </dd>
              </div>`
            : null
        }
        <div>
          <dt>Session energy</dt>
          <dd data-field="energy">${props.session ? kwh(props.session.energyWh) : '–'}</dd>
        </div>
        <div>
          <dt>SoC</dt>
          <dd data-field="soc">${pct(k.socPercent)}</dd>
        </div>
        <div>
          <dt>Fleet</dt>
          <dd class="text">${props.fleet ?? '–'}</dd>
        </div>
      </dl>
      ${
        s
          ? html`<p class="session-link">
            <${Link} href=${`/console/sessions/${encodeURIComponent(s.sessionId)}`}>Session ${s.state} · ${s.driverId}</${Link}>
          </p>`
          : null
      }
    </div>
  `;
}

export function statusWord(status: string): string {
  const words: Record<string, string> = {
    available: 'Available',
    occupied: 'Plugged in',
    preparing: 'Preparing',
    charging: 'Charging',
    suspendedev: 'Paused by car',
    suspendedevse: 'Paused by charger',
    suspended: 'Paused',
    unknown: 'Unknown',
    finishing: 'Finishing',
    reserved: 'Reserved',
    unavailable: 'Out of service',
    faulted: 'Faulted',
  };
  return words[status.toLowerCase()] ?? status;
}
