import { useState } from 'preact/hooks';
import { api, errorText } from './api';
import { kwh, ngn } from './format';
import { LedgerTable } from './session';
import { DriverTokens } from './tokens';
import { useLiveReload } from './live';
import type { Driver, EnergyFigures, Fleet, LedgerEntry, Page, SiteEnergy } from './types';
import { ErrorText, html, Link, Loading, useData } from './ui';

export function MoneyView() {
  const data = useData(
    () =>
      Promise.all([
        api.get<{ fleets: Fleet[] }>('/fleets'),
        api.get<{ drivers: Driver[] }>('/drivers'),
      ]),
    'money',
  );
  const energy = useData(() => api.get<SiteEnergy>('/energy'), 'energy');
  useLiveReload(
    data.reload,
    (type) => type.startsWith('ledger') || type.startsWith('session'),
    500,
  );
  useLiveReload(energy.reload, (type) => type === 'session.state', 1000);
  if (!data.data)
    return html`<${ErrorText}
        error=${data.error}
      />${data.error ? null : html`<${Loading} what="fleets and wallets" />`}`;
  const [{ fleets }, { drivers }] = data.data;
  return html`
    <h1>Money</h1>
    <${ErrorText} error=${data.error} />
    <h2>Energy and revenue per charger</h2>
    <${ErrorText} error=${energy.error} />
    ${energy.data ? html`<${EnergyTable} energy=${energy.data} />` : null}
    <h2>Fleets</h2>
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th>Fleet</th>
            <th class="num">Drivers (active)</th>
            <th class="num">Wallets</th>
          </tr>
        </thead>
        <tbody>
          ${fleets.map(
            (f) =>
              html`<tr>
                <td>${f.name} <span class="muted">${f.fleetId}</span></td>
                <td class="num">${f.drivers} (${f.activeDrivers})</td>
                <td class="num">${ngn(f.walletTotal)}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
    <h2>Drivers and wallets</h2>
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th>Driver</th>
            <th>Fleet</th>
            <th>Vehicle</th>
            <th class="num">Balance</th>
            <th>Open session</th>
          </tr>
        </thead>
        <tbody>
          ${drivers.map(
            (d) => html`<tr data-driver=${d.driverId}>
              <td><${Link} href=${`/console/money/drivers/${encodeURIComponent(d.driverId)}`}>${d.driverId}</${Link}><br /><span class="muted">${d.email}${d.active ? '' : ' · inactive'}</span></td>
              <td>${d.fleetId}</td>
              <td>${d.vehicleModel ?? '–'}</td>
              <td class="num" data-field="balance">${ngn(d.balance)}</td>
              <td>${d.openSessionId ? html`<${Link} href=${`/console/sessions/${encodeURIComponent(d.openSessionId)}`}>${d.openSessionId}</${Link}>` : '–'}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    </div>
  `;
}

export function DriverView(props: { id: string; canAct: boolean }) {
  const id = encodeURIComponent(props.id);
  const data = useData(
    () =>
      Promise.all([
        api.get<Driver>(`/drivers/${id}`),
        api.get<Page<LedgerEntry>>(`/ledger?driverId=${id}&limit=100`),
      ]),
    props.id,
  );
  useLiveReload(data.reload, (_t, d) => d.driverId === props.id, 300);
  if (!data.data)
    return html`<${ErrorText}
        error=${data.error}
      />${data.error ? null : html`<${Loading} what="the driver" />`}`;
  const [driver, ledger] = data.data;
  return html`
    <h1>Driver <span class="mono">${driver.driverId}</span></h1>
    <${ErrorText} error=${data.error} />
    <dl class="facts">
      <div>
        <dt>Email</dt>
        <dd>${driver.email}</dd>
      </div>
      <div>
        <dt>Fleet</dt>
        <dd>${driver.fleetId}</dd>
      </div>
      <div>
        <dt>Vehicle</dt>
        <dd>${driver.vehicleModel ?? '–'}</dd>
      </div>
      <div>
        <dt>Active</dt>
        <dd>${driver.active ? 'yes' : 'no'}</dd>
      </div>
      <div>
        <dt>Balance</dt>
        <dd class="big" data-field="balance">${ngn(driver.balance)}</dd>
      </div>
    </dl>
    ${
      props.canAct
        ? html`<div class="forms">
            <${MoneyForm} driverId=${driver.driverId} kind="top-up" onDone=${data.reload} />
            <${MoneyForm} driverId=${driver.driverId} kind="adjustment" onDone=${data.reload} />
          </div>`
        : null
    }
    <${DriverTokens} driverId=${driver.driverId} canAct=${props.canAct} />
    <h2>Ledger</h2>
    <${LedgerTable} entries=${ledger.items} />
  `;
}

/**
 * A top-up (amount ≥ 1, reason optional) or an adjustment (non-zero, reason required). One
 * Idempotency-Key per filled-in form: sending the same form twice (a double click, a retry after a
 * lost answer) moves the money once; a new key after a success.
 */
function MoneyForm(props: { driverId: string; kind: 'top-up' | 'adjustment'; onDone: () => void }) {
  const [key, setKey] = useState(() => crypto.randomUUID());
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | null>(null);
  const topUp = props.kind === 'top-up';
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const fields = new FormData(form);
    const amount = Number(fields.get('amount'));
    const reason = String(fields.get('reason') ?? '').trim();
    setBusy(true);
    try {
      const entry = await api.post<LedgerEntry>(
        `/drivers/${encodeURIComponent(props.driverId)}/${topUp ? 'top-ups' : 'adjustments'}`,
        { amount, ...(reason ? { reason } : {}) },
        { 'idempotency-key': key },
      );
      setOutcome({
        ok: true,
        text: `${topUp ? 'Topped up' : 'Adjusted'} ${ngn(entry.amount)}: balance now ${ngn(entry.balanceAfter)}.`,
      });
      setKey(crypto.randomUUID());
      form.reset();
      props.onDone();
    } catch (err) {
      setOutcome({ ok: false, text: errorText(err) });
    } finally {
      setBusy(false);
    }
  };
  const idp = `${props.kind}-`;
  return html`
    <form class="money-form" onSubmit=${submit} aria-label=${topUp ? 'Top up' : 'Adjust'}>
      <h2>${topUp ? 'Top up the wallet' : 'Adjust the balance'}</h2>
      <label for=${`${idp}amount`}>Amount (NGN)${topUp ? '' : ', negative takes money back'}</label>
      <input
        id=${`${idp}amount`}
        name="amount"
        type="number"
        step="1"
        required
        min=${topUp ? 1 : undefined}
        inputmode="numeric"
      />
      <label for=${`${idp}reason`}>Reason${topUp ? ' (optional)' : ''}</label>
      <input id=${`${idp}reason`} name="reason" maxlength="500" required=${!topUp} />
      <button type="submit" class="primary" disabled=${busy}>
        ${busy ? 'Sending…' : topUp ? 'Top up' : 'Adjust'}
      </button>
      ${outcome ? html`<p class=${outcome.ok ? 'reply' : 'error'} role="status">${outcome.text}</p>` : null}
    </form>
  `;
}

/** Today and this month, as the gateway counts them in the site's time zone. */
function EnergyTable(props: { energy: SiteEnergy }) {
  const e = props.energy;
  const cells = (f: EnergyFigures) => html`
    <td class="num">${f.sessions}</td>
    <td class="num">${kwh(f.energyWh)}</td>
    <td class="num">${ngn(f.revenueNgn)}</td>
  `;
  return html`
    <div class="table-wrap">
      <table data-table="energy">
        <thead>
          <tr>
            <th rowspan="2">Charger</th>
            <th colspan="3" class="group">Today</th>
            <th colspan="3" class="group">This month</th>
          </tr>
          <tr>
            <th class="num">Sessions</th>
            <th class="num">Energy</th>
            <th class="num">Revenue</th>
            <th class="num">Sessions</th>
            <th class="num">Energy</th>
            <th class="num">Revenue</th>
          </tr>
        </thead>
        <tbody>
          ${e.chargers.map(
            (c) =>
              html`<tr data-charger=${c.chargerId}>
                <td>${c.chargerId}</td>
                ${cells(c.today)} ${cells(c.month)}
              </tr>`,
          )}
        </tbody>
        <tfoot>
          <tr>
            <th>Site</th>
            ${cells(e.total.today)} ${cells(e.total.month)}
          </tr>
        </tfoot>
      </table>
    </div>
  `;
}
