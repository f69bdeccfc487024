import { useRef, useState } from 'preact/hooks';
import { api, ConsoleRequestError, errorText } from './api';
import { time } from './format';
import type { LimitSource, NodeLimit, PowerLimits, SitePower } from './types';
import { ConfirmButton, ErrorText, html } from './ui';

// The site's power under load management (docs/load-management.md): each node's limit, what binds
// it and what its connectors draw; for an operator, the run-time limit that only ever lowers a node.

export type PowerState =
  | { kind: 'off' }
  | { kind: 'error'; error: string }
  | { kind: 'on'; power: SitePower; limits: PowerLimits | null };

export type Allocation = SitePower['sessions'][number];

/**
 * Both reads, or `off` when the site has no `power` key. A failed read is shown on the panel
 * alone: the chargers are still worth seeing.
 */
export async function loadPower(): Promise<PowerState> {
  const [power, limits] = await Promise.allSettled([
    api.get<SitePower>('/site/power'),
    api.get<PowerLimits>('/site/power/limits'),
  ]);
  if (power.status === 'rejected') {
    const e: unknown = power.reason;
    if (e instanceof ConsoleRequestError && e.code === 'power_not_configured')
      return { kind: 'off' };
    return { kind: 'error', error: errorText(e) };
  }
  return {
    kind: 'on',
    power: power.value,
    limits: limits.status === 'fulfilled' ? limits.value : null,
  };
}

/** Each drawing session's share, by session id, for the connector tiles. */
export function allocations(state: PowerState): Map<string, Allocation> | null {
  if (state.kind !== 'on') return null;
  return new Map(state.power.sessions.map((s) => [s.sessionId, s]));
}

const kwNumber = new Intl.NumberFormat('en-NG', { maximumFractionDigits: 2 });
export const kwText = (kw: number): string => `${kwNumber.format(kw)} kW`;

/** A session's share in words: its kW, or why it has none. */
export function allocationText(a: Allocation | undefined): string {
  if (!a) return '–';
  if (a.state === 'waiting') return 'Waiting for capacity';
  if (a.state === 'unmanaged') return `${kwText(a.allocatedKw)}, refuses limits`;
  return kwText(a.allocatedKw);
}

const nodeName = (nodeId: string): string => (nodeId === 'site' ? 'Site' : `Circuit ${nodeId}`);

const SOURCE_WORDS: Record<LimitSource, string> = {
  config: 'Contracted limit',
  schedule: 'Schedule',
  feed: 'Limit feed',
  fallback: 'Fallback (feed silent)',
  operator: 'Operator limit',
};
const sourceWord = (s: LimitSource): string => SOURCE_WORDS[s] ?? s;

/** Until when the binding source holds, when the gateway knows. */
function untilText(node: NodeLimit): string | null {
  const binding = node.constraints
    .filter((c) => c.source === node.source)
    .sort((a, b) => a.limitKw - b.limitKw)[0];
  if (node.source === 'operator') {
    return node.override?.expiresAt ? `until ${time(node.override.expiresAt)}` : 'until cleared';
  }
  if (node.source === 'fallback') return 'until the feed speaks again';
  if (node.source === 'feed' && binding?.until) return `fresh until ${time(binding.until)}`;
  return binding?.until ? `until ${time(binding.until)}` : null;
}

export function PowerPanel(props: { state: PowerState; canAct: boolean; onChange: () => void }) {
  const state = props.state;
  // Without load management the site view shows nothing more.
  if (state.kind === 'off') return null;
  if (state.kind === 'error')
    return html`<section class="power" aria-label="Site power">
      <h2>Site power</h2>
      <${ErrorText} error=${state.error} />
    </section>`;
  const limits = new Map(state.limits?.nodes.map((n) => [n.nodeId, n]) ?? []);
  return html`
    <section class="power" aria-label="Site power">
      <h2>Site power</h2>
      <p class="muted">
        ${
          state.power.policy === 'owed-weighted'
            ? 'Shared between the sessions by the energy each is still owed.'
            : 'Shared equally between the sessions.'
        }
      </p>
      <div class="tiles">
        ${state.power.nodes.map(
          (n) => html`<${NodeTile} key=${n.nodeId} node=${n} limit=${limits.get(n.nodeId)} />`,
        )}
      </div>
      ${
        props.canAct && state.limits
          ? html`<${LimitForm} nodes=${state.limits.nodes} onDone=${props.onChange} />`
          : null
      }
    </section>
  `;
}

function NodeTile(props: { node: SitePower['nodes'][number]; limit: NodeLimit | undefined }) {
  const n = props.node;
  const l = props.limit;
  const until = l ? untilText(l) : null;
  const o = l?.override ?? null;
  return html`
    <section class="tile node" data-node=${n.nodeId} data-source=${n.source}>
      <header>
        <h3>${nodeName(n.nodeId)}</h3>
        <span class="source" data-field="source">${sourceWord(n.source)}</span>
      </header>
      <dl class="figures">
        <div>
          <dt>Limit</dt>
          <dd data-field="limit">${kwText(n.limitKw)}</dd>
        </div>
        <div>
          <dt>Contracted</dt>
          <dd>${l ? kwText(l.contractKw) : '–'}</dd>
        </div>
      </dl>
      ${until ? html`<p class="until" data-field="until">${until}</p>` : null}
      ${
        o
          ? html`<p data-field="override">
              Operator limit ${kwText(o.limitKw)} set by ${o.setBy}:
              “${o.reason}”${
                n.source === 'operator' ? '' : ` (not binding: ${sourceWord(n.source)} is lower)`
              }
            </p>`
          : null
      }
      <${PowerBar} measuredKw=${n.measuredKw} limitKw=${n.limitKw} />
      <p data-field="allocated">Allocated to sessions: ${kwText(n.allocatedKw)}</p>
    </section>
  `;
}

/** Measured power against the limit: a thick black bar, and the figures in words beside it. */
function PowerBar(props: { measuredKw: number; limitKw: number }) {
  const { measuredKw, limitKw } = props;
  const share = limitKw > 0 ? measuredKw / limitKw : measuredKw > 0 ? Infinity : 0;
  const over = measuredKw > limitKw;
  const words = `${kwText(measuredKw)} of ${kwText(limitKw)}`;
  return html`
    <div
      class=${`bar${over ? ' over' : ''}`}
      role="meter"
      aria-label="Measured power against the limit"
      aria-valuemin="0"
      aria-valuemax=${limitKw}
      aria-valuenow=${Math.min(measuredKw, limitKw)}
      aria-valuetext=${words}
    >
      <span class="bar-fill" style=${{ width: `${Math.min(share, 1) * 100}%` }}></span>
    </div>
    <p class="bar-words" data-field="measured">
      Measured <strong>${words}</strong>${
        over
          ? html` · <strong class="neg">over the limit by ${kwText(measuredKw - limitKw)}</strong>`
          : limitKw > 0
            ? ` (${Math.round(share * 100)} %)`
            : ''
      }
    </p>
  `;
}

const HOURS = [1, 2, 4, 8, 12, 24];

/** Sets or clears the operator's limit on a node: asked first, then the gateway's answer. */
function LimitForm(props: { nodes: NodeLimit[]; onDone: () => void }) {
  const form = useRef<HTMLFormElement>(null);
  const [nodeId, setNodeId] = useState(props.nodes[0]?.nodeId ?? 'site');
  const [limitKw, setLimitKw] = useState('');
  const [reason, setReason] = useState('');
  const [hours, setHours] = useState('');
  const node = props.nodes.find((n) => n.nodeId === nodeId) ?? props.nodes[0];
  if (!node) return null;
  const name = nodeName(node.nodeId);
  const path = `/site/power/limits/${encodeURIComponent(node.nodeId)}`;
  const ends = () => (hours ? new Date(Date.now() + Number(hours) * 3_600_000) : null);
  const set = async () => {
    const expiresAt = ends();
    const answer = await api.put<NodeLimit>(path, {
      limitKw: Number(limitKw),
      reason: reason.trim(),
      ...(expiresAt ? { expiresAt: expiresAt.toISOString() } : {}),
    });
    props.onDone();
    if (answer.source === 'operator') {
      return `${name} is now limited to ${kwText(answer.limitKw)} by the operator limit, ${untilText(answer) ?? ''}.`;
    }
    return `The operator limit of ${kwText(answer.override?.limitKw ?? Number(limitKw))} is kept, but ${name} stays at ${kwText(answer.limitKw)}: ${sourceWord(answer.source).toLowerCase()} is lower.`;
  };
  // Always offered: were it shown only while a limit is set, the reload after a clear would take
  // its dialog, and the answer in it, away.
  const clear = async () => {
    const answer = await api.delete<NodeLimit & { cleared: boolean }>(path);
    props.onDone();
    return answer.cleared
      ? `Cleared: ${name} is back to ${kwText(answer.limitKw)} (${sourceWord(answer.source).toLowerCase()}).`
      : `${name} had no operator limit; it stays at ${kwText(answer.limitKw)} (${sourceWord(answer.source).toLowerCase()}).`;
  };
  const endWords = () => {
    const at = ends();
    return at ? `until ${time(at.toISOString())}` : 'until cleared';
  };
  return html`
    <form
      ref=${form}
      class="power-form"
      aria-label="Power limit"
      onSubmit=${(e: Event) => e.preventDefault()}
    >
      <h3>Operator limit</h3>
      <p class="muted">Lowers a node below its contracted limit, never above it.</p>
      <label for="power-node">Node</label>
      <select
        id="power-node"
        value=${node.nodeId}
        onChange=${(e: Event) => setNodeId((e.currentTarget as HTMLSelectElement).value)}
      >
        ${props.nodes.map((n) => html`<option value=${n.nodeId}>${nodeName(n.nodeId)}</option>`)}
      </select>
      <label for="power-limit">Limit (kW), at most ${kwText(node.contractKw)}</label>
      <input
        id="power-limit"
        type="number"
        min="0"
        max=${node.contractKw}
        step="0.1"
        inputmode="decimal"
        required
        value=${limitKw}
        onInput=${(e: Event) => setLimitKw((e.currentTarget as HTMLInputElement).value)}
      />
      <label for="power-reason">Reason</label>
      <input
        id="power-reason"
        maxlength="500"
        required
        value=${reason}
        onInput=${(e: Event) => setReason((e.currentTarget as HTMLInputElement).value)}
      />
      <label for="power-ends">Ends</label>
      <select
        id="power-ends"
        value=${hours}
        onChange=${(e: Event) => setHours((e.currentTarget as HTMLSelectElement).value)}
      >
        <option value="">When cleared</option>
        ${HOURS.map((h) => html`<option value=${String(h)}>In ${h} ${h === 1 ? 'hour' : 'hours'}</option>`)}
      </select>
      <div class="actions">
        <${ConfirmButton}
          label="Set limit"
          question=${`Limit ${name} to ${limitKw} kW ${endWords()}? Sessions on it are slowed at once. Reason: ${reason.trim()}`}
          ready=${() => form.current?.reportValidity() ?? false}
          run=${set}
        />
        <${ConfirmButton}
          label="Clear operator limit"
          question=${
            node.override
              ? `Clear the operator limit of ${kwText(node.override.limitKw)} on ${name}?`
              : `Clear the operator limit on ${name}? None is set now.`
          }
          run=${clear}
        />
      </div>
    </form>
  `;
}
