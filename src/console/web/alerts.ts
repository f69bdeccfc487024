import type { Alert } from '../../alerts/alert.js';
import { deliveryWords, type DeliveryState } from '../../alerts/delivery-words.js';
import { api } from './api';
import { kwh, time } from './format';
import { useLiveReload } from './live';
import {
  ConfirmButton,
  ErrorText,
  html,
  Link,
  Loading,
  navigate,
  useData,
  useLocation,
} from './ui';

// The site's alerts (docs/alerts.md): open ones first, what each is about in words, where each
// of its events stands with the webhook, and for an operator the acknowledgement (which clears
// only an operator loss) and a test event through the webhook.

type AlertRow = Alert & { deliveries: DeliveryState[] };

interface AlertList {
  alerts: AlertRow[];
  openCount: number;
  webhook: { configured: boolean; undelivered: number };
}

const KIND_WORDS: Record<string, string> = {
  charger_offline: 'Charger offline',
  charger_faulted: 'Connector faulted',
  stop_escalated: 'Stop escalated',
  operator_loss: 'Operator loss',
  outbox_backlog: 'Uplink backlog',
  disk_space: 'Disk space low',
  certificate_expiry: 'Certificate expiring',
  station_payment: 'Payment at the charger',
};

const STATES = [
  ['open', 'Open'],
  ['closed', 'Closed'],
  ['all', 'All'],
] as const;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);

/** What the alert says beyond its kind and subject, in words. */
export function alertText(a: Alert): string {
  const d = a.detail;
  switch (a.kind) {
    case 'charger_offline':
      return `No connection since ${time(str(d.since))}`;
    case 'charger_faulted':
      return `Error code ${str(d.errorCode) ?? 'none given'}`;
    case 'stop_escalated':
      return `Charger ignored the remote stop; sent ${(Array.isArray(d.steps) ? d.steps : []).join(', ')}`;
    case 'operator_loss':
      return `${kwh(num(d.wh))} delivered beyond what was paid`;
    case 'outbox_backlog':
      return `${num(d.depth) ?? '?'} messages unsent, the oldest ${num(d.oldestAgeSeconds) ?? '?'} s old`;
    case 'disk_space':
      return `${num(d.freePercent) ?? '?'} % free (alert below ${num(d.minPercent) ?? '?'} %)`;
    case 'station_payment':
      return `${str(d.status) ?? '?'} ${num(d.amount) ?? '?'} at the charger's terminal (${str(d.pspRef) ?? '?'}): not billed`;
    case 'certificate_expiry':
      return str(d.error)
        ? `Cannot be read: ${str(d.error)}`
        : `Expires ${time(str(d.notAfter))} (${str(d.file) ?? ''})`;
    default:
      return JSON.stringify(d);
  }
}

function Subject(props: { alert: Alert }) {
  const a = props.alert;
  const charger = str(a.detail.chargerId);
  if (a.kind === 'stop_escalated' || a.kind === 'operator_loss')
    return html`<${Link} href=${`/console/sessions/${encodeURIComponent(a.subject)}`}>${a.subject}</${Link}>`;
  if (charger)
    return html`<${Link} href=${`/console/chargers/${encodeURIComponent(charger)}`}>${a.subject}</${Link}>`;
  return html`<span>${a.subject}</span>`;
}

const isAlertEvent = (type: string) => type.startsWith('alert.');

/** Each of the alert's events (raised, cleared) and where it stands with the webhook. */
function Deliveries(props: { deliveries: DeliveryState[] }) {
  if (props.deliveries.length === 0) return '–';
  return html`<ul class="plain">
    ${props.deliveries.map(
      (d) =>
        html`<li
          key=${d.eventId}
          data-delivery=${d.type}
          data-state=${d.deliveredAt ? 'delivered' : d.givenUpAt ? 'given-up' : 'waiting'}
        >
          ${d.type === 'alert.raised' ? 'Raised' : 'Cleared'}: ${deliveryWords(d, time)}
        </li>`,
    )}
  </ul>`;
}

/** How long the console waits for the test event before saying where it stands. */
const TEST_WAIT_MS = 10_000;

/** Sends a test event through the webhook and waits a little for the receiver's answer. */
async function sendTest(): Promise<string> {
  let d = await api.post<DeliveryState>('/alerts/test', {});
  const until = Date.now() + TEST_WAIT_MS;
  while (!d.deliveredAt && !d.givenUpAt && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    d = await api.get<DeliveryState>(`/alerts/deliveries/${encodeURIComponent(d.eventId)}`);
  }
  const words = deliveryWords(d, time);
  return d.deliveredAt ? `The receiver took it: ${words}.` : `Not delivered: ${words}.`;
}

/** The open alerts' count, for the header and the site view; null until it is known. */
export function useOpenAlerts(): number | null {
  const count = useData(() => api.get<AlertList>('/alerts?limit=1'), 'alert-count');
  useLiveReload(count.reload, isAlertEvent, 300);
  return count.data?.openCount ?? null;
}

export function AlertCount(props: { count: number | null }) {
  if (props.count === null) return null;
  return html`<span
    class=${`badge ${props.count > 0 ? 'bad' : 'ok'}`}
    data-alert-count=${props.count}
    >${props.count === 0 ? 'No alerts' : `${props.count} ${props.count === 1 ? 'alert' : 'alerts'} open`}</span
  >`;
}

/** On the site view: the open alerts' count, a link to them. */
export function SiteAlerts() {
  const count = useOpenAlerts();
  if (count === null) return null;
  return html`<p class="site-alerts">
    <${Link} href="/console/alerts"><${AlertCount} count=${count} /></${Link}>
  </p>`;
}

export function AlertsView(props: { canAct: boolean }) {
  const { query } = useLocation();
  const state = query.get('state') ?? 'open';
  const list = useData(() => api.get<AlertList>(`/alerts?state=${state}&limit=200`), state);
  useLiveReload(list.reload, isAlertEvent, 300);
  const webhook = list.data?.webhook;
  const acknowledge = async (a: Alert) => {
    const done = await api.post<Alert>(`/alerts/${encodeURIComponent(a.id)}/acknowledge`, {});
    list.reload();
    return done.clearedAt && !a.clearedAt ? 'Acknowledged and cleared.' : 'Acknowledged.';
  };
  return html`
    <h1>Alerts</h1>
    <nav class="filters" aria-label="Which alerts">
      ${STATES.map(
        ([s, name]) =>
          html`<button
            type="button"
            class=${s === state ? 'primary' : ''}
            aria-pressed=${s === state}
            onClick=${() => navigate(`/console/alerts${s === 'open' ? '' : `?state=${s}`}`)}
          >
            ${name}
          </button>`,
      )}
      ${list.data ? html`<${AlertCount} count=${list.data.openCount} />` : null}
    </nav>
    ${
      webhook?.configured
        ? html`<p class="webhook-state">
            <span
              >${`Webhook: ${webhook.undelivered === 0 ? 'nothing waiting' : `${webhook.undelivered} undelivered`}`}</span
            >
            ${
              props.canAct
                ? html`<${ConfirmButton}
                    label="Send a test alert"
                    question=${`Send a test event to the webhook?${webhook.undelivered > 0 ? ` It goes after the ${webhook.undelivered} waiting.` : ''}`}
                    run=${sendTest}
                  />`
                : null
            }
          </p>`
        : null
    }
    <${ErrorText} error=${list.error} />
    ${
      list.data === null
        ? list.error
          ? null
          : html`<${Loading} what="alerts" />`
        : list.data.alerts.length === 0
          ? html`<p class="muted">${state === 'open' ? 'Nothing needs you now.' : 'No alert.'}</p>`
          : html`<div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th>Raised</th>
                    <th>Alert</th>
                    <th>About</th>
                    <th>What</th>
                    <th>Cleared</th>
                    <th>Acknowledged</th>
                    <th>Webhook</th>
                  </tr>
                </thead>
                <tbody>
                  ${list.data.alerts.map(
                    (a) =>
                      html`<tr key=${a.id} data-alert=${a.kind} data-subject=${a.subject}>
                        <td>${time(a.raisedAt)}</td>
                        <td><strong>${KIND_WORDS[a.kind] ?? a.kind}</strong></td>
                        <td><${Subject} alert=${a} /></td>
                        <td>${alertText(a)}</td>
                        <td>
                          ${a.clearedAt ? time(a.clearedAt) : html`<span class="badge bad">Open</span>`}
                        </td>
                        <td>
                          ${
                            a.acknowledgedAt
                              ? `${a.acknowledgedBy ?? ''}, ${time(a.acknowledgedAt)}`
                              : props.canAct
                                ? html`<${ConfirmButton}
                                    label="Acknowledge"
                                    question=${`Acknowledge "${KIND_WORDS[a.kind] ?? a.kind}" for ${a.subject}?${a.kind === 'operator_loss' || a.kind === 'station_payment' ? ' This also clears it.' : ''}`}
                                    run=${() => acknowledge(a)}
                                  />`
                                : '–'
                          }
                        </td>
                        <td><${Deliveries} deliveries=${a.deliveries} /></td>
                      </tr>`,
                  )}
                </tbody>
              </table>
            </div>`
    }
  `;
}
