import { time } from './format';
import type { OutOfService } from './types';
import { html } from './ui';

/**
 * Who took it out of service, why and since when: what a refused driver is told, shown on the
 * site view's tiles and the charger page alike, so that an operator never has to guess whether
 * "Out of service" is a colleague's decision or the charger's own.
 */
export function OutOfServiceNote(props: { label: string; hold: OutOfService | null | undefined }) {
  const h = props.hold;
  if (!h) return null;
  const why = h.reason ? `“${h.reason}”` : 'no reason given';
  return html`<p class="error" data-field="out-of-service">
    ${`${props.label} since ${time(h.at)}, by ${h.by}: ${why}`}
  </p>`;
}
