import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { AlertsView, useOpenAlerts } from './alerts';
import {
  api,
  ConsoleRequestError,
  errorText,
  session,
  setCsrfToken,
  whenUnauthorized,
} from './api';
import { AuditView } from './audit';
import { ChargerPage } from './charger';
import { FirmwareView } from './firmware';
import { setSiteTimeZone, siteTimeZone } from './format';
import { onLiveState, startLive, stopLive } from './live';
import { DriverView, MoneyView } from './money';
import { SessionView } from './session';
import { SessionsView } from './sessions';
import { SiteView } from './site';
import { TariffsView } from './tariffs';
import type { Login, Status } from './types';
import { html, Link, navigate, useLocation } from './ui';

function App() {
  const [login, setLogin] = useState<Login | null | undefined>(undefined);
  const [siteId, setSiteId] = useState('');
  // The token and the zone are set before the views render with the login.
  const enter = (l: Login) => {
    setCsrfToken(l.csrfToken);
    setSiteTimeZone(l.timeZone);
    setLogin(l);
  };
  useEffect(() => {
    whenUnauthorized(() => {
      stopLive();
      setCsrfToken(null);
      setLogin(null);
    });
    session.current().then(
      (l) => enter(l),
      () => setLogin(null),
    );
  }, []);
  useEffect(() => {
    if (!login) return;
    startLive();
    api.get<Status>('/status').then(
      (s) => {
        setSiteId(s.siteId);
      },
      () => undefined,
    );
  }, [login]);

  if (login === undefined) return html`<p class="boot">Loading the site console…</p>`;
  if (login === null) return html`<${LoginForm} onLogin=${enter} />`;
  const logout = async () => {
    try {
      await session.logout();
    } catch {
      // Logged out already (expired or revoked): the page forgets the session all the same.
    }
    stopLive();
    setCsrfToken(null);
    setLogin(null);
    navigate('/console');
  };
  return html`<${Shell} login=${login} siteId=${siteId} onLogout=${logout} />`;
}

function LoginForm(props: { onLogin: (l: Login) => void }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    setBusy(true);
    try {
      props.onLogin(
        await session.login(
          String(f.get('name') ?? '').trim(),
          String(f.get('credential') ?? '').trim(),
        ),
      );
    } catch (err) {
      setError(
        err instanceof ConsoleRequestError && err.status === 401
          ? `${err.message} Check the operator name and credential.`
          : errorText(err),
      );
    } finally {
      setBusy(false);
    }
  };
  return html`
    <main class="login">
      <h1>Site console</h1>
      <form onSubmit=${submit} aria-label="Log in">
        <label for="login-name">Operator name</label>
        <input id="login-name" name="name" autocomplete="username" required autofocus />
        <label for="login-credential">Credential</label>
        <input
          id="login-credential"
          name="credential"
          type="password"
          autocomplete="current-password"
          required
        />
        <button type="submit" class="primary" disabled=${busy}>
          ${busy ? 'Logging in…' : 'Log in'}
        </button>
        ${error ? html`<p class="error" role="alert">${error}</p>` : null}
      </form>
      <p class="muted">
        The credential is the one <code>fleet-gateway operator create</code> printed.
      </p>
    </main>
  `;
}

function LiveBadge() {
  const [state, setState] = useState('down');
  useEffect(() => onLiveState(setState), []);
  const words: Record<string, string> = {
    live: 'Live',
    connecting: 'Connecting…',
    down: 'Not live',
  };
  return html`<span class=${`live live-${state}`} data-live=${state} role="status"
    >${words[state] ?? state}</span
  >`;
}

function Shell(props: { login: Login; siteId: string; onLogout: () => void }) {
  const { path } = useLocation();
  const canAct = props.login.operator.role === 'operator';
  const openAlerts = useOpenAlerts();
  const parts = path
    .replace(/^\/console\/?/, '')
    .split('/')
    .filter(Boolean)
    .map(decodeURIComponent);
  const section = parts[0] ?? '';
  let view;
  if (section === '') view = html`<${SiteView} canAct=${canAct} />`;
  else if (section === 'sessions' && parts[1]) view = html`<${SessionView} id=${parts[1]} />`;
  else if (section === 'sessions') view = html`<${SessionsView} />`;
  else if (section === 'money' && parts[1] === 'drivers' && parts[2])
    view = html`<${DriverView} id=${parts[2]} canAct=${canAct} />`;
  else if (section === 'money') view = html`<${MoneyView} />`;
  else if (section === 'tariffs') view = html`<${TariffsView} canAct=${canAct} />`;
  else if (section === 'firmware') view = html`<${FirmwareView} canAct=${canAct} />`;
  else if (section === 'alerts') view = html`<${AlertsView} canAct=${canAct} />`;
  else if (section === 'audit') view = html`<${AuditView} />`;
  else if (section === 'chargers' && parts[1])
    view = html`<${ChargerPage} id=${parts[1]} canAct=${canAct} />`;
  else
    view = html`<h1>Not found</h1><p>No page at ${path}. <${Link} href="/console">Back to the site</${Link}></p>`;
  const tab = (href: string, name: string, key: string) =>
    html`<${Link} href=${href} class=${section === key ? 'current' : ''}>${name}</${Link}>`;
  return html`
    <header class="top">
      <div class="brand">
        <strong>${props.siteId || 'Site'}</strong>
        <span class="muted">times in ${siteTimeZone()}</span>
      </div>
      <nav aria-label="Main">
        ${tab('/console', 'Site', '')} ${tab('/console/sessions', 'Sessions', 'sessions')}
        ${tab('/console/money', 'Money', 'money')} ${tab('/console/tariffs', 'Tariffs', 'tariffs')}
        ${tab('/console/firmware', 'Firmware', 'firmware')} ${tab('/console/audit', 'Audit trail', 'audit')}
        <${Link} href="/console/alerts" class=${section === 'alerts' ? 'current' : ''}
          >Alerts ${openAlerts ? html`<span class="count" data-open-alerts=${openAlerts}>${openAlerts}</span>` : null}</${Link}
        >
      </nav>
      <div class="who">
        <${LiveBadge} />
        <span>${`${props.login.operator.name} (${props.login.operator.role})`}</span>
        <button type="button" onClick=${props.onLogout}>Log out</button>
      </div>
    </header>
    <main>${view}</main>
  `;
}

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(html`<${App} />`, root);
}
