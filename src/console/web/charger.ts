import { useState } from 'preact/hooks';
import { api, errorText } from './api';
import { kw, pct, time } from './format';
import { useLiveReload } from './live';
import { OutOfServiceNote } from './out-of-service';
import { protocolName, statusWord } from './site';
import type { ActionAnswer, ChargerView } from './types';
import { ConfirmButton, ErrorText, html, Link, Loading, useData } from './ui';

/** The charger's reply in words: its own status, and whether it took the command. */
function replyText(a: ActionAnswer): string {
  return `${a.chargerId}${a.connectorId ? ` connector ${a.connectorId}` : ''} answered “${a.status}”${a.accepted ? '' : ' (not accepted)'}.`;
}

const path = (id: string) => `/chargers/${encodeURIComponent(id)}`;

export function ChargerPage(props: { id: string; canAct: boolean }) {
  const data = useData(() => api.get<ChargerView>(path(props.id)), props.id);
  const [allCalls, setAllCalls] = useState(false);
  useLiveReload(data.reload, (_t, d) => d.chargerId === props.id, 300);
  if (!data.data)
    return html`<${ErrorText}
        error=${data.error}
      />${data.error ? null : html`<${Loading} what="the charger" />`}`;
  const c = data.data;
  // After a command the page reads the charger again: its state and the messages just exchanged.
  const act = async (url: string, body: unknown) => {
    const answer = await api.post<ActionAnswer>(url, body);
    data.reload();
    return replyText(answer);
  };
  return html`
    <h1>
      Charger <span class="mono">${c.chargerId}</span>
      <span class=${`badge ${c.connected ? 'ok' : 'bad'}`}
        >${c.connected ? 'Online' : 'Offline'}</span
      >
    </h1>
    <${ErrorText} error=${data.error} />
    <${OutOfServiceNote} label="The whole charger is out of service" hold=${c.outOfService} />
    <h2>Boot details</h2>
    <dl class="facts">
      <div>
        <dt>Protocol</dt>
        <dd>${c.protocol ? protocolName(c.protocol) : '–'}</dd>
      </div>
      <div>
        <dt>Vendor, model</dt>
        <dd>${c.vendor ?? '–'} ${c.model ?? ''}</dd>
      </div>
      <div>
        <dt>Serial number</dt>
        <dd>${c.serialNumber ?? '–'}</dd>
      </div>
      <div>
        <dt>Firmware</dt>
        <dd>${c.firmwareVersion ?? '–'}</dd>
      </div>
      <div>
        <dt>Booted</dt>
        <dd>${time(c.bootedAt)}</dd>
      </div>
      <div>
        <dt>Last heard</dt>
        <dd>${time(c.lastSeenAt)}</dd>
      </div>
      <div>
        <dt>Security profile</dt>
        <dd>${c.securityProfile}</dd>
      </div>
    </dl>
    ${
      props.canAct
        ? html`<div class="actions" aria-label="Charger actions">
            <${ConfirmButton}
              label="Soft reset"
              question=${`Soft reset ${c.chargerId}? It restarts once running transactions end.`}
              run=${() => act(`${path(c.chargerId)}/reset`, { type: 'soft' })}
            />
            <${ConfirmButton}
              label="Hard reset"
              danger=${true}
              question=${`Hard reset ${c.chargerId} now? Running sessions are cut off.`}
              run=${() => act(`${path(c.chargerId)}/reset`, { type: 'hard' })}
            />
            <${ConfirmButton}
              label="Take out of service"
              danger=${true}
              question=${`Make all of ${c.chargerId} unavailable?`}
              run=${() => act(`${path(c.chargerId)}/availability`, { operative: false, reason: 'from the site console' })}
            />
            <${ConfirmButton}
              label="Back into service"
              question=${`Make ${c.chargerId} available again?`}
              run=${() => act(`${path(c.chargerId)}/availability`, { operative: true, reason: 'from the site console' })}
            />
            <${ConfirmButton}
              label="Trigger status report"
              question=${`Ask ${c.chargerId} to send its status now?`}
              run=${() => act(`${path(c.chargerId)}/trigger`, { message: 'status' })}
            />
            <${ConfirmButton}
              label="Trigger meter report"
              question=${`Ask ${c.chargerId} to send its meter values now?`}
              run=${() => act(`${path(c.chargerId)}/trigger`, { message: 'meter' })}
            />
          </div>`
        : null
    }
    <h2>Connectors</h2>
    <div class="tiles">
      ${c.connectors.map(
        (k) =>
          html`<section class="tile" data-connector=${k.connectorId} key=${k.connectorId}>
            <header>
              <h3>Connector ${k.connectorId}</h3>
              <span class=${`status status-${k.status}`} data-status=${k.status}
                >${statusWord(k.status)}</span
              >
            </header>
            ${k.errorCode ? html`<p class="error">Error: ${k.errorCode}</p>` : null}
            <${OutOfServiceNote} label="Out of service" hold=${k.outOfService} />
            <dl class="figures">
              <div>
                <dt>Power</dt>
                <dd>${k.session ? kw(k.powerW) : '–'}</dd>
              </div>
              <div>
                <dt>SoC</dt>
                <dd>${pct(k.socPercent)}</dd>
              </div>
            </dl>
            ${
              k.session
                ? html`<p><${Link} href=${`/console/sessions/${encodeURIComponent(k.session.sessionId)}`}>Session ${k.session.state} · ${k.session.driverId}</${Link}></p>`
                : null
            }
            ${
              props.canAct
                ? html`<div class="actions">
                    ${
                      k.session
                        ? html`<${ConfirmButton}
                            label="Stop session"
                            danger=${true}
                            question=${`Stop session ${k.session.sessionId} on connector ${k.connectorId}? It settles as any other.`}
                            run=${async () => {
                              const a = await api.post<
                                ActionAnswer & { sessionState: string; retrying: boolean }
                              >(`/sessions/${encodeURIComponent(k.session?.sessionId ?? '')}/stop`);
                              return `${replyText(a)} Session is ${a.sessionState}${a.retrying ? '; the gateway keeps asking' : ''}.`;
                            }}
                          />`
                        : null
                    }
                    <${ConfirmButton}
                      label="Unlock"
                      question=${`Unlock the cable of ${c.chargerId} connector ${k.connectorId}?`}
                      run=${() => act(`${path(c.chargerId)}/connectors/${encodeURIComponent(k.connectorId)}/unlock`, undefined)}
                    />
                    <${ConfirmButton}
                      label=${`Out of service`}
                      danger=${true}
                      question=${`Make connector ${k.connectorId} unavailable?`}
                      run=${() => act(`${path(c.chargerId)}/connectors/${encodeURIComponent(k.connectorId)}/availability`, { operative: false, reason: 'from the site console' })}
                    />
                    <${ConfirmButton}
                      label=${`Into service`}
                      question=${`Make connector ${k.connectorId} available again?`}
                      run=${() => act(`${path(c.chargerId)}/connectors/${encodeURIComponent(k.connectorId)}/availability`, { operative: true, reason: 'from the site console' })}
                    />
                  </div>`
                : null
            }
          </section>`,
      )}
    </div>
    <h2>Field deviations seen</h2>
    ${
      c.deviations.count === 0
        ? html`<p class="muted">
            None: this charger has said nothing the gateway had to tolerate.
          </p>`
        : html`<div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th>Kind</th>
                  <th class="num">Times</th>
                  <th>Last seen</th>
                </tr>
              </thead>
              <tbody>
                ${c.deviations.kinds.map(
                  (k) =>
                    html`<tr>
                      <td>${k.kind}</td>
                      <td class="num">${k.count}</td>
                      <td>${time(k.lastSeenAt ?? null)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
    <h2>Recent OCPP messages</h2>
    ${
      c.recentCalls === undefined
        ? html`<p class="muted">This gateway does not keep the recent messages.</p>`
        : c.recentCalls.length === 0
          ? html`<p class="muted">None since the gateway started.</p>`
          : html`<div class="table-wrap">
                <table data-table="calls">
                  <thead>
                    <tr>
                      <th>When</th>
                      <th>Message</th>
                      <th>Way</th>
                      <th>Outcome</th>
                      <th class="num">Took</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${c.recentCalls.slice(0, allCalls ? undefined : 12).map(
                      (m) =>
                        html`<tr>
                          <td>${time(m.at)}</td>
                          <td>${m.action}</td>
                          <td>${m.direction === 'in' ? 'from the charger' : 'to the charger'}</td>
                          <td class=${m.outcome === 'ok' ? '' : 'neg'}>${m.outcome}</td>
                          <td class="num">${`${m.seconds.toFixed(2)} s`}</td>
                        </tr>`,
                    )}
                  </tbody>
                </table>
              </div>
              ${
                c.recentCalls.length > 12 && !allCalls
                  ? html`<button type="button" onClick=${() => setAllCalls(true)}>
                      ${`Show all ${c.recentCalls.length}`}
                    </button>`
                  : null
              }`
    }
    <h2>Notes from the OCPP edge</h2>
    ${
      (c.recentEvents ?? []).length === 0
        ? html`<p class="muted">None recorded.</p>`
        : html`<div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th>When</th>
                  <th>What</th>
                  <th>Note</th>
                </tr>
              </thead>
              <tbody>
                ${(c.recentEvents ?? []).map(
                  (e) =>
                    html`<tr>
                      <td>${time(e.at)}</td>
                      <td>${e.action}</td>
                      <td>${e.note ?? ''}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
    <${ConfigSection} chargerId=${c.chargerId} />
  `;
}

interface ConfigAnswer {
  entries: { key: string; value: string | null; readonly: boolean | null }[];
  unknownKeys: string[];
}

/** Reading the configuration is a call to the charger (and an audited one): on request only. */
function ConfigSection(props: { chargerId: string }) {
  const [config, setConfig] = useState<ConfigAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const read = async () => {
    setBusy(true);
    try {
      setConfig(await api.get<ConfigAnswer>(`${path(props.chargerId)}/config`));
      setError(null);
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  return html`
    <h2>Configuration</h2>
    <button type="button" onClick=${read} disabled=${busy}>
      ${busy ? 'Asking the charger…' : config ? 'Read again' : 'Read from the charger'}
    </button>
    <${ErrorText} error=${error} />
    ${
      config
        ? html`<div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th>Key</th>
                  <th>Value</th>
                  <th>Read-only</th>
                </tr>
              </thead>
              <tbody>
                ${config.entries.map(
                  (e) =>
                    html`<tr>
                      <td class="mono">${e.key}</td>
                      <td class="mono">${e.value ?? '–'}</td>
                      <td>${e.readonly === null ? '–' : e.readonly ? 'yes' : 'no'}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
        : null
    }
  `;
}
