import { useState } from 'preact/hooks';
import { api, errorText } from './api';
import { kwh, ngn, siteDay, siteDayStart, startedBy, time } from './format';
import { useLiveReload } from './live';
import type { Page, SessionRow } from './types';
import { ErrorText, html, Link, Loading, navigate, useData, useLocation } from './ui';

const STATES = ['authorizing', 'authorized', 'charging', 'stopping', 'settled', 'refunded'];
/** The day after a YYYY-MM-DD: "to" a day includes that whole day at the site. */
const nextDay = (d: string) =>
  new Date(Date.parse(`${d}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
const FILTERS = ['state', 'chargerId', 'driverId', 'fleetId', 'from', 'to'] as const;

export function SessionsView() {
  const { query } = useLocation();
  const qs = query.toString();
  const list = useData(
    () => api.get<Page<SessionRow>>(`/sessions?limit=50${qs ? `&${qs}` : ''}`),
    qs,
  );
  const [more, setMore] = useState<{
    items: SessionRow[];
    next: string | null;
    key: string;
  } | null>(null);
  const [moreError, setMoreError] = useState<string | null>(null);
  useLiveReload(list.reload, (type) => type.startsWith('session'));

  const extra = more?.key === qs ? more : null;
  const items = [...(list.data?.items ?? []), ...(extra?.items ?? [])];
  const next = extra ? extra.next : (list.data?.nextCursor ?? null);

  const submit = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const p = new URLSearchParams();
    for (const f of FILTERS) {
      const v = String(form.get(f) ?? '').trim();
      if (v) p.set(f, f === 'from' ? siteDayStart(v) : f === 'to' ? siteDayStart(nextDay(v)) : v);
    }
    navigate(`/console/sessions${p.size ? `?${p}` : ''}`);
  };
  const loadMore = async () => {
    if (!next) return;
    try {
      const page = await api.get<Page<SessionRow>>(
        `/sessions?limit=50&cursor=${encodeURIComponent(next)}${qs ? `&${qs}` : ''}`,
      );
      setMore({ items: [...(extra?.items ?? []), ...page.items], next: page.nextCursor, key: qs });
      setMoreError(null);
    } catch (e) {
      setMoreError(errorText(e));
    }
  };
  const day = (iso: string | null) => (iso ? siteDay(iso) : '');
  const toDay = (iso: string | null) =>
    iso ? siteDay(new Date(Date.parse(iso) - 1).toISOString()) : '';

  return html`
    <h1>Sessions</h1>
    <form class="filters" onSubmit=${submit} key=${qs}>
      <label
        >State
        <select name="state" value=${query.get('state') ?? ''}>
          <option value="">any</option>
          ${STATES.map((s) => html`<option value=${s}>${s}</option>`)}
        </select>
      </label>
      <label>Charger <input name="chargerId" value=${query.get('chargerId') ?? ''} /></label>
      <label>Driver <input name="driverId" value=${query.get('driverId') ?? ''} /></label>
      <label>Fleet <input name="fleetId" value=${query.get('fleetId') ?? ''} /></label>
      <label>From <input type="date" name="from" value=${day(query.get('from'))} /></label>
      <label>To <input type="date" name="to" value=${toDay(query.get('to'))} /></label>
      <button type="submit" class="primary">Filter</button>
    </form>
    <${ErrorText} error=${list.error} />
    ${
      list.data === null && !list.error
        ? html`<${Loading} what="sessions" />`
        : html`
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th>Created</th>
                    <th>Session</th>
                    <th>State</th>
                    <th>Charger</th>
                    <th>Driver</th>
                    <th>Started by</th>
                    <th class="num">Paid</th>
                    <th class="num">Energy</th>
                    <th class="num">Cost</th>
                  </tr>
                </thead>
                <tbody>
                  ${items.map(
                    (s) => html`<tr>
                    <td>${time(s.createdAt)}</td>
                    <td><${Link} href=${`/console/sessions/${encodeURIComponent(s.sessionId)}`}>${s.sessionId}</${Link}></td>
                    <td><span class=${`state state-${s.state}`}>${s.state}</span></td>
                    <td>${s.chargerId} / ${s.connectorId}</td>
                    <td>${s.driverId}</td>
                    <td data-field="origin">${startedBy(s)}</td>
                    <td class="num">${ngn(s.amount)}</td>
                    <td class="num">${kwh(s.energyWh)}</td>
                    <td class="num">${ngn(s.cost)}</td>
                  </tr>`,
                  )}
                </tbody>
              </table>
            </div>
            ${items.length === 0 ? html`<p class="muted">No session matches.</p>` : null}
            <${ErrorText} error=${moreError} />
            ${next ? html`<button type="button" onClick=${loadMore}>Show more</button>` : null}
          `
    }
  `;
}
