/**
 * The program service's console, served at `/` on its port: programs and
 * their versions (upload by drag and drop, submit), the approval queue
 * (decide; a separation-of-duties refusal is said in plain words), and
 * deployments (choose assignments, start, watch every machine's deployment
 * live). Built on the `/api/v1` operations only (PV-01): every button here
 * is one call any client can make. This file routes between the pages;
 * each page is its own file.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { logout, onLoginNeeded, whoAmI, type Me } from './api.js';
import { LoginDialog } from './login.js';
import { Approvals } from './approvals.js';
import { Programs } from './programs.js';
import { Audit, DriftTriage } from './triage.js';
import { Admin, Dashboard, Deployments, Trials } from './more.js';
import '../gateway/styles.css';
import './styles.css';

type Where = 'overview' | 'programs' | 'approvals' | 'drift' | 'audit' | 'trials' | 'deployments' | 'admin';
const PAGES: [Where, string][] = [['overview', 'Overview'], ['programs', 'Programs'], ['approvals', 'Approvals'], ['trials', 'Trials'], ['deployments', 'Deployments'], ['drift', 'Drift'], ['audit', 'Audit'], ['admin', 'Admin']];
function route(): Where {
  const m = /^#\/(programs|approvals|drift|audit|trials|deployments|admin)/.exec(location.hash);
  return (m?.[1] as Where | undefined) ?? 'overview';
}
const queryOf = (key: string) => new URLSearchParams(location.hash.split('?')[1] ?? '').get(key) ?? '';

function View({ where }: { where: Where }) {
  switch (where) {
    case 'programs': return <Programs />;
    case 'approvals': return <Approvals />;
    case 'drift': return <DriftTriage />;
    case 'audit': return <Audit />;
    case 'trials': return <Trials />;
    case 'deployments': return <Deployments status={queryOf('status')} />;
    case 'admin': return <Admin />;
    default: return <Dashboard />;
  }
}

function App() {
  const [me, setMe] = useState<Me | null>(null);
  const [checked, setChecked] = useState(false);
  const [loginNeeded, setLoginNeeded] = useState(false);
  const [where, setWhere] = useState(route);
  useEffect(() => {
    const onHash = () => setWhere(route());
    window.addEventListener('hashchange', onHash);
    const off = onLoginNeeded(setLoginNeeded);
    void whoAmI().then((m) => {
      setMe(m);
      setLoginNeeded(m === null);
      setChecked(true);
    });
    return () => {
      window.removeEventListener('hashchange', onHash);
      off();
    };
  }, []);
  if (!checked) return <p>Loading…</p>;
  return (
    <>
      <div inert={loginNeeded}>
        <a class="skip" href="#main">Skip to content</a>
        <nav class="top" aria-label="Console">
          <a class="brand" href="#/">Program version service</a>
          {PAGES.map(([key, label]) => <a key={key} href={key === 'overview' ? '#/' : `#/${key}`} aria-current={where === key ? 'page' : undefined}>{label}</a>)}
          <a href="/api/docs">API reference</a>
          {me && <span class="who">{me.name} ({me.role})</span>}
          <button type="button" class="link" onClick={() => void logout().then(() => setMe(null))}>Log out</button>
        </nav>
        {me && <View key={`${me.name}-${where}-${location.hash}`} where={where} />}
      </div>
      {loginNeeded && <LoginDialog title="Program version service: log in" onDone={(m) => { setMe(m); setLoginNeeded(false); }} />}
    </>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
