import uPlot from 'uplot';
import { useEffect, useRef } from 'preact/hooks';
import { api } from './api';
import { kwh, ngn, price, siteTimeZone, startedBy, time } from './format';
import { useLiveReload } from './live';
import type { Losses, SessionDetail } from './types';
import { ErrorText, html, Link, Loading, useData } from './ui';

export function SessionView(props: { id: string }) {
  const detail = useData(async () => {
    const d = await api.get<SessionDetail>(`/sessions/${encodeURIComponent(props.id)}`);
    // A gateway without the session's own loss: it is found among the site's losses.
    const losses = d.loss === undefined ? await api.get<Losses>('/losses') : null;
    return [d, losses] as const;
  }, props.id);
  useLiveReload(
    detail.reload,
    (_t, data) => data.sessionId === props.id || data.sessionId === undefined,
    500,
  );
  if (!detail.data)
    return html`<${ErrorText}
        error=${detail.error}
      />${detail.error ? null : html`<${Loading} what="the session" />`}`;
  const [d, losses] = detail.data;
  const s = d.session;
  const loss =
    d.loss !== undefined
      ? d.loss
      : (losses?.sessions.find((l) => l.sessionId === s.sessionId) ?? null);
  return html`
    <h1>Session <span class="mono">${s.sessionId}</span></h1>
    <${ErrorText} error=${detail.error} />
    <dl class="facts">
      <div><dt>State</dt><dd><span class=${`state state-${s.state}`}>${s.state}</span>${s.endReason ? ` (${s.endReason})` : ''}</dd></div>
      ${
        d.stoppedBy
          ? html`<div>
              <dt>Stopped by</dt>
              <dd data-field="stopped-by">${d.stoppedBy.words}</dd>
            </div>`
          : null
      }
      <div><dt>Charger</dt><dd><${Link} href=${`/console/chargers/${encodeURIComponent(s.chargerId)}`}>${s.chargerId}</${Link}> / ${s.connectorId}</dd></div>
      <div><dt>Started by</dt><dd data-field="origin">${startedBy(s)}${s.startedOffline ? ' (offline, reported late)' : ''}</dd></div>
      <div><dt>Driver</dt><dd><${Link} href=${`/console/money/drivers/${encodeURIComponent(s.driverId)}`}>${s.driverId}</${Link}> (${s.fleetId})</dd></div>
      <div><dt>Paid</dt><dd>${ngn(s.amount)} at ${price(s.pricePerKwh)}/kWh</dd></div>
      ${
        d.tariff
          ? html`<div>
              <dt>Tariff</dt>
              <dd data-field="tariff">
                ${d.tariff.id} version
                ${d.tariff.version}${d.tariff.window ? `, window ${d.tariff.window}` : ''}
              </dd>
            </div>`
          : null
      }
      <div><dt>Paid energy</dt><dd>${kwh(s.paidEnergyWh)}</dd></div>
      <div><dt>Delivered</dt><dd>${kwh(s.energyWh)}</dd></div>
      <div><dt>Cost</dt><dd>${ngn(s.cost)}</dd></div>
      <div><dt>Credited back</dt><dd>${ngn(s.credited)}</dd></div>
      ${stationLimit(d)}
      ${stationCosts(d)}
      <div><dt>Operator's loss</dt><dd data-field="loss">${loss ? `${kwh(loss.beyondPaidWh)} beyond paid, ${ngn(loss.beyondPaidNgn)}` : 'none'}</dd></div>
    </dl>
    <h2>Power and energy</h2>
    <${SessionPlot} detail=${d} />
    <h2>Timeline</h2>
    <ol class="timeline">
      ${d.timeline.map((t) => html`<li><time datetime=${t.at}>${time(t.at)}</time> ${t.event}</li>`)}
    </ol>
    <h2>Ledger entries</h2>
    <${LedgerTable} entries=${d.ledger} />
  `;
}

/** The limit an OCPP 2.1 station held itself: what was sent, what it confirmed. */
function stationLimit(d: SessionDetail) {
  const limit = d.stationChecks?.limit;
  if (!limit) return null;
  const confirmed =
    limit.confirmedEnergyWh === null
      ? 'not confirmed'
      : limit.confirmedEnergyWh === limit.sentEnergyWh
        ? 'confirmed'
        : `confirmed ${kwh(limit.confirmedEnergyWh)}`;
  return html`<div>
    <dt>Station's limit</dt>
    <dd data-field="station-limit">
      ${limit.sentEnergyWh === null ? 'not sent' : `${kwh(limit.sentEnergyWh)} sent, ${confirmed}`}
    </dd>
  </div>`;
}

/** The station's own costs that differed from the gateway's (never billed). */
function stationCosts(d: SessionDetail) {
  const differences = d.stationChecks?.costDifferences ?? [];
  if (differences.length === 0) return null;
  return html`<div>
    <dt>Station's cost</dt>
    <dd data-field="station-cost">
      ${differences
        .map(
          (c) =>
            `${c.kind}: ${ngn(c.stationNgn)} for ${kwh(c.energyWh)}, the gateway's ${ngn(c.gatewayNgn)}`,
        )
        .join('; ')}
    </dd>
  </div>`;
}

export function LedgerTable(props: { entries: SessionDetail['ledger'] }) {
  if (props.entries.length === 0) return html`<p class="muted">No ledger entries.</p>`;
  return html`
    <div class="table-wrap">
      <table class="ledger">
        <thead>
          <tr>
            <th>When</th>
            <th>Kind</th>
            <th class="num">Amount</th>
            <th class="num">Balance after</th>
            <th>Session</th>
            <th>Who, why</th>
          </tr>
        </thead>
        <tbody>
          ${props.entries.map(
            (e) =>
              html`<tr data-kind=${e.kind}>
                <td>${time(e.createdAt)}</td>
                <td>${e.kind.replace(/_/g, ' ')}</td>
                <td class=${`num ${e.amount < 0 ? 'neg' : ''}`}>${ngn(e.amount)}</td>
                <td class="num">${ngn(e.balanceAfter)}</td>
                <td>
                  ${e.sessionId ? html`<${Link} href=${`/console/sessions/${encodeURIComponent(e.sessionId)}`}>${e.sessionId}</${Link}>` : '–'}
                </td>
                <td>${[e.actor, e.reason].filter(Boolean).join(': ') || '–'}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
  `;
}

type Point = NonNullable<SessionDetail['meterSeries']>[number];

/** The session's own series; from the raw samples and the start reading where a gateway has none. */
function seriesOf(d: SessionDetail): Point[] {
  if (d.meterSeries) return d.meterSeries;
  const start =
    d.transaction?.meterStartWh ?? d.meterSamples.find((m) => m.energyWh !== null)?.energyWh;
  if (start === undefined || start === null) return [];
  return d.meterSamples.map((m) => ({
    at: m.timestamp,
    energyWh: m.energyWh === null ? null : Math.max(0, m.energyWh - start),
    powerW: m.powerW,
    socPercent: m.socPercent,
  }));
}

/** Power (kW) and the session's energy (kWh) over time, with the energy the driver paid for. */
function SessionPlot(props: { detail: SessionDetail }) {
  const box = useRef<HTMLDivElement>(null);
  const d = props.detail;
  const points = seriesOf(d);
  useEffect(() => {
    const el = box.current;
    if (!el || points.length === 0) return;
    const x = points.map((m) => Date.parse(m.at) / 1000);
    const power = points.map((m) => (m.powerW === null ? null : m.powerW / 1000));
    const energy = points.map((m) => (m.energyWh === null ? null : m.energyWh / 1000));
    const paid = points.map(() => d.session.paidEnergyWh / 1000);
    const tz = siteTimeZone();
    const plot = new uPlot(
      {
        width: Math.max(280, el.clientWidth),
        height: 300,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), tz),
        scales: {
          x: { time: true },
          kW: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] },
          kWh: {
            range: (_u, _min, max) => [0, Math.max(max, d.session.paidEnergyWh / 1000) * 1.05 || 1],
          },
        },
        axes: [
          { stroke: '#000', grid: { stroke: '#bbb' } },
          { scale: 'kW', label: 'Power (kW)', stroke: '#000', grid: { stroke: '#ddd' } },
          { scale: 'kWh', label: 'Energy (kWh)', side: 1, stroke: '#000', grid: { show: false } },
        ],
        series: [
          {},
          {
            label: 'Power (kW)',
            scale: 'kW',
            stroke: '#b00020',
            width: 2,
            points: { show: false },
          },
          {
            label: 'Energy (kWh)',
            scale: 'kWh',
            stroke: '#0033a0',
            width: 3,
            points: { show: false },
          },
          {
            label: 'Paid energy (kWh)',
            scale: 'kWh',
            stroke: '#000',
            width: 2,
            dash: [8, 6],
            points: { show: false },
          },
        ],
      },
      [x, power, energy, paid],
      el,
    );
    const resize = () => plot.setSize({ width: Math.max(280, el.clientWidth), height: 300 });
    addEventListener('resize', resize);
    return () => {
      removeEventListener('resize', resize);
      plot.destroy();
    };
  }, [d]);
  if (points.length === 0) {
    return html`<p class="muted">
      No meter samples for this session (they are kept in memory only for recent sessions, and start
      empty after a gateway restart).
    </p>`;
  }
  return html`<div
    class="plot"
    ref=${box}
    role="img"
    aria-label="Power and energy over time against the paid energy"
  ></div>`;
}
