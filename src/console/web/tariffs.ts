import { useRef, useState } from 'preact/hooks';
import { api } from './api';
import { siteTimeZone, time } from './format';
import { ConfirmButton, ErrorText, html, Loading, useData } from './ui';

// Tariffs (docs/money.md, "Tariffs"): each one's base price, its time-of-day windows in the site's
// zone and the price in force now; an operator edits them when they are kept in the database.

const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
const DAY_WORDS: Record<string, string> = {
  mon: 'Mon',
  tue: 'Tue',
  wed: 'Wed',
  thu: 'Thu',
  fri: 'Fri',
  sat: 'Sat',
  sun: 'Sun',
};

export interface TariffWindow {
  days: string[];
  from: string;
  to: string;
  pricePerKwh: number;
}

export interface Tariff {
  id: string;
  version: number;
  pricePerKwh: number;
  windows: TariffWindow[];
  setBy: string;
  setAt: string;
  now: { pricePerKwh: number; window: string | null; until: string | null };
  connectors: string[];
}

interface Tariffs {
  source: 'config' | 'database';
  timeZone: string;
  tariffs: Tariff[];
}

/** A price as set, to the 3 decimals a tariff may have (199.999 is not rounded to 200). */
const exact = new Intl.NumberFormat('en-NG', {
  style: 'currency',
  currency: 'NGN',
  minimumFractionDigits: 0,
  maximumFractionDigits: 3,
});
const perKwh = (n: number) => `${exact.format(n)}/kWh`;
const daysText = (days: string[]) =>
  DAYS.filter((d) => days.includes(d))
    .map((d) => DAY_WORDS[d])
    .join(', ');
/** "18:00 – 06:00 (next day)": a window whose end is not later runs over midnight. */
const hoursText = (w: TariffWindow) =>
  w.to > w.from
    ? `${w.from} – ${w.to}`
    : w.to === w.from
      ? 'all day'
      : `${w.from} – ${w.to} (next day)`;

/** Which price holds now, in the words of the window table. */
function nowWords(t: Tariff): string {
  const w = t.windows.find((x) => `${x.days.join(',')} ${x.from}-${x.to}` === t.now.window);
  if (!t.now.window) return 'Base price';
  return w ? `${daysText(w.days)} ${hoursText(w)}` : t.now.window;
}

export function TariffsView(props: { canAct: boolean }) {
  const loaded = useData(() => api.get<Tariffs>('/tariffs'), 'tariffs');
  const [editing, setEditing] = useState<string | null>(null);
  const data = loaded.data;
  if (!data)
    return html`<h1>Tariffs</h1>
      <${ErrorText} error=${loaded.error} /><${Loading} what="tariffs" />`;
  const editable = props.canAct && data.source === 'database';
  // A save keeps its form (and the dialog with the gateway's answer) open; Close leaves it.
  const close = () => setEditing(null);
  return html`
    <h1>Tariffs</h1>
    <p class="muted" data-field="source">
      ${
        data.source === 'database'
          ? 'Kept in the gateway’s database: a change applies to sessions started after it.'
          : 'Kept in the config file (pricing.tariffSource: config): change them there and restart.'
      }
      ${' '}A session pays the price in force at its start for all its energy. Hours are in
      ${' '}${data.timeZone}.
    </p>
    <${ErrorText} error=${loaded.error} />
    <div class="tiles tariffs">
      ${data.tariffs.map((t) =>
        editing === t.id
          ? html`<${TariffForm}
              key=${t.id}
              tariff=${t}
              onSaved=${loaded.reload}
              onClose=${close}
            />`
          : html`<${TariffTile}
              key=${t.id}
              tariff=${t}
              editable=${editable}
              onEdit=${() => setEditing(t.id)}
              onDeleted=${loaded.reload}
            />`,
      )}
    </div>
    ${
      editable
        ? editing === ''
          ? html`<${TariffForm} tariff=${null} onSaved=${loaded.reload} onClose=${close} />`
          : html`<p><button type="button" onClick=${() => setEditing('')}>New tariff</button></p>`
        : null
    }
  `;
}

function TariffTile(props: {
  tariff: Tariff;
  editable: boolean;
  onEdit: () => void;
  onDeleted: () => void;
}) {
  const t = props.tariff;
  const remove = async () => {
    await api.delete(`/tariffs/${encodeURIComponent(t.id)}`);
    props.onDeleted();
    return `Tariff ${t.id} deleted.`;
  };
  return html`
    <section class="tile tariff" data-tariff=${t.id} aria-label=${`Tariff ${t.id}`}>
      <header>
        <h2>${t.id}</h2>
        <span class="muted">version ${t.version}</span>
      </header>
      <dl class="figures">
        <div>
          <dt>Now</dt>
          <dd data-field="now">${perKwh(t.now.pricePerKwh)}</dd>
        </div>
        <div>
          <dt>Base price</dt>
          <dd data-field="base">${perKwh(t.pricePerKwh)}</dd>
        </div>
      </dl>
      <p class="until" data-field="until">
        ${nowWords(t)}${t.now.until ? `, until ${time(t.now.until)}` : ', all the time'}
      </p>
      ${
        t.windows.length > 0
          ? html`<table class="windows">
              <caption class="muted">
                Hours with their own price (${siteTimeZone()})
              </caption>
              <thead>
                <tr>
                  <th>Days</th>
                  <th>Hours</th>
                  <th>Price</th>
                </tr>
              </thead>
              <tbody>
                ${t.windows.map(
                  (w) =>
                    html`<tr>
                      <td>${daysText(w.days)}</td>
                      <td>${hoursText(w)}</td>
                      <td>${perKwh(w.pricePerKwh)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
          : html`<p class="muted">One price all week.</p>`
      }
      <p data-field="connectors">
        ${t.connectors.length > 0 ? `Connectors: ${t.connectors.join(', ')}` : 'No connector uses it.'}
      </p>
      <p class="muted">Set by ${t.setBy}, ${time(t.setAt)}</p>
      ${
        props.editable
          ? html`<div class="actions">
              <button type="button" onClick=${props.onEdit}>Edit ${t.id}</button>
              ${
                t.connectors.length === 0
                  ? html`<${ConfirmButton}
                      label=${`Delete ${t.id}`}
                      danger=${true}
                      question=${`Delete tariff ${t.id}? No connector uses it.`}
                      run=${remove}
                    />`
                  : null
              }
            </div>`
          : null
      }
    </section>
  `;
}

interface WindowDraft {
  days: string[];
  from: string;
  to: string;
  price: string;
}

/** Creates a tariff (`tariff` null) or replaces one; asked first, then the gateway's answer. */
function TariffForm(props: { tariff: Tariff | null; onSaved: () => void; onClose: () => void }) {
  const form = useRef<HTMLFormElement>(null);
  const t = props.tariff;
  const [id, setId] = useState(t?.id ?? '');
  const [base, setBase] = useState(t ? String(t.pricePerKwh) : '');
  const [windows, setWindows] = useState<WindowDraft[]>(
    t?.windows.map((w) => ({ ...w, days: [...w.days], price: String(w.pricePerKwh) })) ?? [],
  );
  const change = (i: number, patch: Partial<WindowDraft>) =>
    setWindows(windows.map((w, j) => (j === i ? { ...w, ...patch } : w)));
  const name = t?.id ?? id.trim();
  const save = async () => {
    const answer = await api.put<Tariff>(`/tariffs/${encodeURIComponent(name)}`, {
      pricePerKwh: Number(base),
      windows: windows.map((w) => ({
        days: DAYS.filter((d) => w.days.includes(d)),
        from: w.from,
        to: w.to,
        pricePerKwh: Number(w.price),
      })),
    });
    props.onSaved();
    return `Tariff ${answer.id} is now version ${answer.version}: ${perKwh(answer.now.pricePerKwh)} now.`;
  };
  const idField = `tariff-id-${t?.id ?? 'new'}`;
  return html`
    <form
      ref=${form}
      class="tile tariff-form"
      aria-label=${t ? `Edit tariff ${t.id}` : 'New tariff'}
      onSubmit=${(e: Event) => e.preventDefault()}
    >
      <h2>${t ? `Edit ${t.id}` : 'New tariff'}</h2>
      ${
        t
          ? null
          : html`<label for=${idField}>Name</label>
              <input
                id=${idField}
                required
                maxlength="64"
                pattern="[A-Za-z0-9._:@\\-]+"
                value=${id}
                onInput=${(e: Event) => setId((e.currentTarget as HTMLInputElement).value)}
              />`
      }
      <label for=${`${idField}-base`}>Base price (NGN/kWh)</label>
      <input
        id=${`${idField}-base`}
        type="number"
        min="0.001"
        step="0.001"
        inputmode="decimal"
        required
        value=${base}
        onInput=${(e: Event) => setBase((e.currentTarget as HTMLInputElement).value)}
      />
      ${windows.map(
        (w, i) =>
          html`<fieldset class="window" aria-label=${`Window ${i + 1}`}>
            <legend>Window ${i + 1}</legend>
            <div class="days">
              ${DAYS.map(
                (d) =>
                  html`<label class="day">
                    <input
                      type="checkbox"
                      checked=${w.days.includes(d)}
                      onChange=${(e: Event) =>
                        change(i, {
                          days: (e.currentTarget as HTMLInputElement).checked
                            ? [...w.days, d]
                            : w.days.filter((x) => x !== d),
                        })}
                    />
                    ${DAY_WORDS[d]}
                  </label>`,
              )}
            </div>
            <label>
              From
              <input
                type="time"
                required
                value=${w.from}
                onInput=${(e: Event) => change(i, { from: (e.currentTarget as HTMLInputElement).value })}
              />
            </label>
            <label>
              To
              <input
                type="time"
                required
                value=${w.to}
                onInput=${(e: Event) => change(i, { to: (e.currentTarget as HTMLInputElement).value })}
              />
            </label>
            <label>
              Price (NGN/kWh)
              <input
                type="number"
                min="0.001"
                step="0.001"
                inputmode="decimal"
                required
                value=${w.price}
                onInput=${(e: Event) => change(i, { price: (e.currentTarget as HTMLInputElement).value })}
              />
            </label>
            <button type="button" onClick=${() => setWindows(windows.filter((_, j) => j !== i))}>
              Remove window ${i + 1}
            </button>
          </fieldset>`,
      )}
      <button
        type="button"
        onClick=${() =>
          setWindows([
            ...windows,
            { days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '18:00', to: '22:00', price: '' },
          ])}
      >
        Add window
      </button>
      <div class="actions">
        <${ConfirmButton}
          label="Save tariff"
          question=${`Save tariff ${name}: ${base} NGN/kWh base, ${windows.length} window(s)? Sessions started from now pay it; those charging keep their price.`}
          ready=${() => form.current?.reportValidity() ?? false}
          run=${save}
        />
        <button type="button" onClick=${props.onClose}>Close</button>
      </div>
    </form>
  `;
}
