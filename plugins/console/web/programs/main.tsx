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
import { Dashboard, Deployments, Trials } from './more.js';
import { Admin } from './admin.js';
import { Gateways, Machines } from './fleet.js';
import '../gateway/styles.css';
import './styles.css';

type Where = 'overview' | 'programs' | 'approvals' | 'drift' | 'audit' | 'trials' | 'deployments' | 'machines' | 'gateways' | 'admin';
/** The pages, and the permission a page needs to be in the top bar (none: every role reads it). */
const PAGES: [Where, string, string[]][] = [
  ['overview', 'Overview', []], ['programs', 'Programs', []], ['approvals', 'Approvals', ['approvals.read']], ['trials', 'Trials', []], ['deployments', 'Deployments', []],
  ['drift', 'Drift', []], ['machines', 'Machines', []], ['gateways', 'Gateways', []], ['audit', 'Audit', ['audit.read']], ['admin', 'Admin', ['users.manage', 'tokens.manage', 'webhooks.manage']],
];
function route(): Where {
  const m = /^#\/(programs|approvals|drift|audit|trials|deployments|machines|gateways|admin)/.exec(location.hash);
  return (m?.[1] as Where | undefined) ?? 'overview';
}
const queryOf = (key: string) => new URLSearchParams(location.hash.split('?')[1] ?? '').get(key) ?? '';
/** `#/programs/{programId}/versions/{number}?diff={from}`: the program and version a link names, and the version to diff it with. */
function programPlace(): { programId: string | null; version: number | null; diffFrom: number | null } {
  const m = /^#\/programs\/(prg_[\w-]+)(?:\/versions\/(\d+))?/.exec(location.hash);
  const from = queryOf('diff');
  return { programId: m?.[1] ?? null, version: m?.[2] ? Number(m[2]) : null, diffFrom: /^\d+$/.test(from) ? Number(from) : null };
}
const mayUse = (me: Me, needs: string[]) => needs.length === 0 || needs.some((p) => me.permissions.includes(p));

function View({ where, me }: { where: Where; me: Me }) {
  const allowed = PAGES.find(([key]) => key === where);
  if (allowed && !mayUse(me, allowed[2])) return <main id="main"><h1>{allowed[1]}</h1><p>Your role ({me.role}) cannot use this page.</p></main>;
  switch (where) {
    case 'programs': return <Programs place={programPlace()} me={me} />;
    case 'approvals': return <Approvals me={me} />;
    case 'drift': return <DriftTriage canManage={me.permissions.includes('drift.manage')} />;
    case 'audit': return <Audit me={me} />;
    case 'trials': return <Trials canDecide={me.permissions.includes('trials.decide')} />;
    case 'deployments': return <Deployments status={queryOf('status')} canDecide={me.permissions.includes('trials.decide')} />;
    case 'machines': return <Machines canManage={me.permissions.includes('fleet.manage')} />;
    case 'gateways': return <Gateways canManage={me.permissions.includes('fleet.manage')} />;
    case 'admin': return <Admin me={me} />;
    default: return <Dashboard />;
  }
}

function App() {
  const [me, setMe] = useState<Me | null>(null);
  const [checked, setChecked] = useState(false);
  const [loginNeeded, setLoginNeeded] = useState(false);
  const [where, setWhere] = useState(route);
  const [, setHash] = useState(location.hash);
  useEffect(() => {
    const onHash = () => {
      setWhere(route());
      setHash(location.hash);
    };
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
          {me && PAGES.filter(([, , needs]) => mayUse(me, needs)).map(([key, label]) => <a key={key} href={key === 'overview' ? '#/' : `#/${key}`} aria-current={where === key ? 'page' : undefined}>{label}</a>)}
          <a href="/api/docs">API reference</a>
          {me && <span class="who">{me.name} ({me.role})</span>}
          <button type="button" class="link" onClick={() => void logout().then(() => setMe(null))}>Log out</button>
        </nav>
        {/* The programs page follows its own place in the URL (program, version) without being made again. */}
        {me && <View key={`${me.name}-${where}${where === 'programs' ? '' : `-${location.hash}`}`} where={where} me={me} />}
      </div>
      {loginNeeded && <LoginDialog title="Program version service: log in" onDone={(m) => { setMe(m); setLoginNeeded(false); }} />}
    </>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
