/**
 * The gateway's web console, served at `/`: the fleet page, a page per
 * machine, and the system page (secret keys), on the gateway's public HTTP
 * interfaces only. Logs in with the gateway's login (or a secret key) or
 * through the plant's provider (docs/identity.md); a session that expires brings the
 * login back over the page without losing what it shows.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { finishProviderSignIn, hasToken, logOut, onAuthRequired } from '../shared/api.js';
import { LoginDialog } from '../shared/login.js';
import { Fleet } from './fleet.js';
import { MachinePage } from './machine.js';
import { SystemPage } from './system.js';
import './styles.css';

function route(): { page: 'fleet' } | { page: 'system' } | { page: 'machine'; machineID: string } {
  if (location.hash === '#/system') return { page: 'system' };
  const m = /^#\/machine\/(.+)$/.exec(location.hash);
  return m ? { page: 'machine', machineID: decodeURIComponent(m[1] as string) } : { page: 'fleet' };
}

function App() {
  const [where, setWhere] = useState(route);
  const [loginNeeded, setLoginNeeded] = useState(!hasToken());
  // Counts log-outs: the system page is made anew after one, so nothing of the user before stays on it.
  const [loggedOut, setLoggedOut] = useState(0);
  useEffect(() => {
    const onHash = () => setWhere(route());
    window.addEventListener('hashchange', onHash);
    const off = onAuthRequired(setLoginNeeded);
    return () => {
      window.removeEventListener('hashchange', onHash);
      off();
    };
  }, []);
  return (
    <>
      {/* The page stays while the login is shown: its calls wait for the login and go on, and nothing on it is lost. */}
      <div inert={loginNeeded}>
        <a class="skip" href="#main">Skip to content</a>
        <nav class="top" aria-label="Console">
          <a class="brand" href="#/">Machine gateway</a>
          <a href="#/system" aria-current={where.page === 'system' ? 'page' : undefined}>System</a>
          <a href="/api/docs">API reference</a>
          <button type="button" class="link" onClick={() => { void logOut(); setLoggedOut(loggedOut + 1); }}>Log out</button>
        </nav>
        {where.page === 'fleet' ? <Fleet /> : where.page === 'system' ? <SystemPage key={loggedOut} /> : <MachinePage key={where.machineID} machineID={where.machineID} />}
      </div>
      {loginNeeded && <LoginDialog product="Machine gateway" />}
    </>
  );
}

// The end of a sign-in through the provider first trades its code for the JWT, so the page's first calls carry it.
void finishProviderSignIn().finally(() => render(<App />, document.getElementById('app') as HTMLElement));
