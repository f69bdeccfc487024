import { useState } from 'preact/hooks';
import { api, errorText } from './api';
import { siteDayStart, siteTimeZone } from './format';
import { ConfirmButton, ErrorText, html, Loading, useData } from './ui';

/** A driver's bound card or vehicle as the operator API shows it: masked, never its value. */
interface BoundToken {
  tokenId: string;
  driverId: string;
  kind: 'card' | 'vehicle';
  type: string;
  masked: string;
  label: string;
  state: 'active' | 'blocked' | 'expired';
  expiresAt: string | null;
  blockedReason: string | null;
  source: 'operator' | 'cloud';
}

const TYPES = ['ISO14443', 'ISO15693', 'KeyCode', 'Local', 'Central', 'MacAddress', 'eMAID'];

/** An expiry with its year (a card may be valid for years), in the site's zone. */
function expiry(iso: string | null): string {
  if (!iso) return '–';
  return new Intl.DateTimeFormat('en-GB', {
    timeZone: siteTimeZone(),
    day: '2-digit',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hour12: false,
  }).format(new Date(iso));
}

/** The instant a token picked to be valid through `day` (the site's calendar) stops. */
function endOfSiteDay(day: string): string {
  const [y, m, d] = day.split('-').map(Number);
  const next = new Date(Date.UTC(y ?? 1970, (m ?? 1) - 1, (d ?? 1) + 1));
  return siteDayStart(next.toISOString().slice(0, 10));
}

/** The driver page's cards and vehicles: the list, and for an operator bind, block, unbind. */
export function DriverTokens(props: { driverId: string; canAct: boolean }) {
  const path = `/drivers/${encodeURIComponent(props.driverId)}/tokens`;
  const data = useData(() => api.get<{ tokens: BoundToken[] }>(path), props.driverId);
  return html`
    <h2>Cards and vehicles</h2>
    <${ErrorText} error=${data.error} />
    ${
      !data.data
        ? data.error
          ? null
          : html`<${Loading} what="the driver’s cards and vehicles" />`
        : data.data.tokens.length === 0
          ? html`<p class="muted" data-field="no-tokens">
              No card or vehicle is bound to this driver.
            </p>`
          : html`<div class="table-wrap">
              <table data-table="tokens">
                <thead>
                  <tr>
                    <th>Kind</th>
                    <th>Type</th>
                    <th>Token</th>
                    <th>Label</th>
                    <th>State</th>
                    <th>Bound by</th>
                    <th>Expires</th>
                    ${props.canAct ? html`<th>Actions</th>` : null}
                  </tr>
                </thead>
                <tbody>
                  ${data.data.tokens.map(
                    (t) =>
                      html`<tr data-token=${t.tokenId}>
                        <td>${t.kind}</td>
                        <td>${t.type}</td>
                        <td class="mono" data-field="masked">${t.masked}</td>
                        <td>${t.label || '–'}</td>
                        <td data-field="state">
                          ${t.state}${t.blockedReason ? html`<br /><span class="muted">${t.blockedReason}</span>` : null}
                        </td>
                        <td>${t.source === 'cloud' ? 'fleet cloud' : 'site operator'}</td>
                        <td>${expiry(t.expiresAt)}</td>
                        ${props.canAct ? html`<td><${TokenActions} path=${path} token=${t} onDone=${data.reload} /></td>` : null}
                      </tr>`,
                  )}
                </tbody>
              </table>
            </div>`
    }
    ${props.canAct ? html`<${BindForm} path=${path} onDone=${data.reload} />` : null}
  `;
}

function TokenActions(props: { path: string; token: BoundToken; onDone: () => void }) {
  const t = props.token;
  const at = `${props.path}/${encodeURIComponent(t.tokenId)}`;
  const blocked = t.state === 'blocked';
  return html`<div class="buttons">
    <${ConfirmButton}
      label=${`${blocked ? 'Unblock' : 'Block'} ${t.masked}`}
      question=${
        blocked
          ? `Unblock ${t.kind} ${t.masked}? Its taps are accepted again.`
          : `Block ${t.kind} ${t.masked}? Its taps are answered Blocked until it is unblocked.`
      }
      run=${async () => {
        await api.post(`${at}/${blocked ? 'unblock' : 'block'}`, {});
        return `${t.masked} is ${blocked ? 'unblocked' : 'blocked'}.`;
      }}
      after=${props.onDone}
    />
    <${ConfirmButton}
      label=${`Unbind ${t.masked}`}
      danger=${true}
      question=${`Unbind ${t.kind} ${t.masked} from this driver? Its taps are refused; the sessions it paid keep it.`}
      run=${async () => {
        await api.delete(at);
        return `${t.masked} is unbound.`;
      }}
      after=${props.onDone}
    />
  </div>`;
}

/**
 * Binds a card or vehicle. The answer shows the value once, to the operator who typed it, so a
 * mistyped UID is seen at once; the list after shows it masked like everything else.
 */
function BindForm(props: { path: string; onDone: () => void }) {
  const [kind, setKind] = useState<'card' | 'vehicle'>('card');
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const f = new FormData(form);
    const label = String(f.get('label') ?? '').trim();
    const until = String(f.get('until') ?? '');
    setBusy(true);
    try {
      const a = await api.post<{ created: boolean; value: string; token: BoundToken }>(props.path, {
        kind,
        type: String(f.get('type')),
        value: String(f.get('value') ?? ''),
        ...(label ? { label } : {}),
        ...(until ? { expiresAt: endOfSiteDay(until) } : {}),
      });
      setOutcome({
        ok: true,
        text: `${a.created ? 'Bound' : 'Updated'} ${a.token.kind} ${a.token.masked} (read as ${a.value}; shown only now).`,
      });
      form.reset();
      setKind('card');
      props.onDone();
    } catch (err) {
      setOutcome({ ok: false, text: errorText(err) });
    } finally {
      setBusy(false);
    }
  };
  return html`
    <form class="money-form token-form" onSubmit=${submit} aria-label="Bind a card or vehicle">
      <h2>Bind a card or vehicle</h2>
      <label for="token-kind">Kind</label>
      <select
        id="token-kind"
        name="kind"
        value=${kind}
        onChange=${(e: Event) => setKind((e.currentTarget as HTMLSelectElement).value as 'card')}
      >
        <option value="card">RFID card</option>
        <option value="vehicle">Vehicle (AutoCharge)</option>
      </select>
      <label for="token-type">Type</label>
      <select id="token-type" name="type" key=${kind}>
        ${TYPES.map(
          (t) =>
            html`<option value=${t} selected=${t === (kind === 'card' ? 'ISO14443' : 'MacAddress')}>
              ${t}
            </option>`,
        )}
      </select>
      <label for="token-value"
        >${kind === 'card' ? 'Card UID' : 'Vehicle id (MAC or EVCCID)'}</label
      >
      <input
        id="token-value"
        name="value"
        required
        maxlength="64"
        autocomplete="off"
        class="mono"
      />
      <label for="token-label">Label (optional)</label>
      <input id="token-label" name="label" maxlength="100" />
      <label for="token-until">Valid through (optional, last day at the site)</label>
      <input id="token-until" name="until" type="date" />
      <button type="submit" class="primary" disabled=${busy}>${busy ? 'Sending…' : 'Bind'}</button>
      ${outcome ? html`<p class=${outcome.ok ? 'reply' : 'error'} role="status">${outcome.text}</p>` : null}
    </form>
  `;
}
