/**
 * The shop-floor terminal at `/terminal`: one machine, a shared touch
 * screen, gloves. Large targets and type. It shows what the machine runs
 * against what was released (hash match), the programs released to it, and
 * its active trial with the verdict; the operator requests a check-in, and
 * keeps or pulls back a trial. The operator's name goes with every action as
 * X-On-Behalf-Of, so the audit names a person, not the terminal's account.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, logout, onLoginNeeded, ProblemError, setOperator, whoAmI, type Me } from '../programs/api.js';
import { LoginDialog } from '../programs/login.js';
import { byName } from '../programs/model.js';
import '../gateway/styles.css';
import './styles.css';

interface Page<T> { items: T[] }
interface Machine { id: string; machineId: string; name: string }
interface Mirror { lastOkAt: string | null; lastError: string | null; running: { name: string; sha256: string; matches: boolean | null; readAt: string } | null; runningError: string | null }
interface Deployment { id: string; fileName: string; dir: string; sha256: string; status: string; purpose: string; finishedAt: string | null; versionId: string }
interface Trial { id: string; fileName: string; status: string; active: boolean; verdict: 'pass' | 'fail' | 'inconclusive' | null; evidence: { summary?: string; reasons?: string[] } | null; endsAt: string | null; versionId: string }

const MACHINE_KEY = 'terminal-machine';
const OPERATOR_KEY = 'terminal-operator';
const message = (err: unknown) => (err instanceof ProblemError ? err.message : 'The service could not be reached.');

function Terminal({ machine }: { machine: Machine }) {
  const [operator, setOperatorName] = useState(sessionStorage.getItem(OPERATOR_KEY) ?? '');
  const [mirror, setMirror] = useState<Mirror | null>(null);
  const [released, setReleased] = useState<Deployment[]>([]);
  const [trial, setTrial] = useState<Trial | null>(null);
  const [note, setNote] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  useEffect(() => {
    setOperator(operator);
    sessionStorage.setItem(OPERATOR_KEY, operator);
  }, [operator]);
  const load = async () => {
    const [m, d, t] = await Promise.all([
      api.get<Mirror>(`/machines/${machine.id}/mirror`),
      api.get<Page<Deployment>>(`/deployments?machineId=${machine.id}&status=Succeeded&limit=100`),
      api.get<Page<Trial>>(`/trials?machineId=${machine.id}&limit=20`),
    ]);
    setMirror(m);
    // The newest successful deployment of each file is what the machine was given.
    const seen = new Set<string>();
    setReleased(d.items.filter((x) => !seen.has(x.fileName) && seen.add(x.fileName)));
    setTrial(t.items.find((x) => x.active) ?? null);
  };
  useEffect(() => {
    let stop = false;
    const tick = async () => {
      await load().catch((err: unknown) => setError(message(err)));
      if (!stop) setTimeout(() => void tick(), 5000);
    };
    void tick();
    return () => {
      stop = true;
    };
  }, [machine.id]);
  const act = async (done: string, call: () => Promise<unknown>) => {
    setError(null);
    setNotice(null);
    if (!operator.trim()) {
      setError('Enter your name first: the record of this action names you.');
      return;
    }
    try {
      await call();
      setNotice(done);
      setNote('');
      await load();
    } catch (err) {
      setError(message(err));
    }
  };
  const running = mirror?.running;
  return (
    <main id="main" class="terminal">
      <header class="term-head">
        <h1>{machine.name} <span class="muted">{machine.machineId}</span></h1>
        <label class="operator">Your name
          <input value={operator} autoComplete="off" onInput={(e) => setOperatorName(e.currentTarget.value)} placeholder="Operator name" />
        </label>
      </header>
      {error && <p class="error big-text" role="alert">{error}</p>}
      {notice && <p class="notice big-text" role="status">{notice}</p>}
      <section class={`term-card running ${running?.matches === true ? 'ok' : running?.matches === false ? 'bad' : 'unknown'}`} aria-labelledby="running-title">
        <h2 id="running-title">Running now</h2>
        {running ? (
          <>
            <p class="program">{running.name}</p>
            <p class="verdict" data-matches={String(running.matches)}>
              {running.matches === true ? 'Matches the released program' : running.matches === false ? 'Differs from the released program' : 'Not a program the service manages'}
            </p>
            <p class="muted">Read {new Date(running.readAt).toLocaleTimeString()}</p>
          </>
        ) : <p>{mirror?.runningError ?? 'Not read yet: request a check-in.'}</p>}
        <button type="button" class="big" onClick={() => void act('Check-in requested: the service reads the machine now.', () => api.post(`/machines/${machine.id}/request-checkin`, { wait: true }))}>Request check-in</button>
      </section>
      {trial && (
        <section class="term-card trial" aria-labelledby="trial-title">
          <h2 id="trial-title">Trial: {trial.fileName}</h2>
          <p class="verdict">Verdict: <b>{trial.verdict ?? 'not yet'}</b>{trial.endsAt ? ` · ends ${new Date(trial.endsAt).toLocaleString()}` : ''}</p>
          {trial.evidence?.summary && <p>{trial.evidence.summary}</p>}
          <label for="trial-note">What did you see?</label>
          <input id="trial-note" value={note} onInput={(e) => setNote(e.currentTarget.value)} />
          <div class="term-actions">
            <button type="button" class="big good" onClick={() => void act('Kept: the trial version is now the released one.', () => api.post(`/trials/${trial.id}/promote`, { note }))}>Good — keep it</button>
            <button type="button" class="big bad" onClick={() => void act('Pulled back: the previous version is going back on the machine.', () => api.post(`/trials/${trial.id}/pull-back`, { note }))}>Bad — pull it back</button>
          </div>
        </section>
      )}
      <section class="term-card" aria-labelledby="released-title">
        <h2 id="released-title">Programs released to this machine</h2>
        {released.length === 0 ? <p>None yet.</p> : (
          <ul class="released">{released.map((d) => (
            <li key={d.id}><b>{d.fileName}</b> <span class="muted">{d.purpose} · {d.finishedAt ? new Date(d.finishedAt).toLocaleString() : ''} · {d.sha256.slice(0, 10)}</span></li>
          ))}</ul>
        )}
      </section>
    </main>
  );
}

function App() {
  const [me, setMe] = useState<Me | null>(null);
  const [checked, setChecked] = useState(false);
  const [loginNeeded, setLoginNeeded] = useState(false);
  const [machines, setMachines] = useState<Machine[]>([]);
  const [machineId, setMachineId] = useState(localStorage.getItem(MACHINE_KEY) ?? '');
  useEffect(() => {
    const off = onLoginNeeded(setLoginNeeded);
    void whoAmI().then((m) => {
      setMe(m);
      setLoginNeeded(m === null);
      setChecked(true);
    });
    return off;
  }, []);
  useEffect(() => {
    if (me) void api.get<Page<Machine>>('/machines?limit=1000').then((p) => setMachines(byName(p.items)), () => undefined);
  }, [me?.name]);
  const machine = machines.find((m) => m.id === machineId);
  if (!checked) return <p>Loading…</p>;
  return (
    <>
      <div inert={loginNeeded}>
        <nav class="top" aria-label="Terminal">
          <span class="brand">Machine terminal</span>
          <label class="machine-pick">Machine{' '}
            <select value={machineId} onChange={(e) => { setMachineId(e.currentTarget.value); localStorage.setItem(MACHINE_KEY, e.currentTarget.value); }}>
              <option value="">Choose…</option>
              {machines.map((m) => <option key={m.id} value={m.id} title={m.id}>{m.name} ({m.machineId})</option>)}
            </select>
          </label>
          <button type="button" class="link" onClick={() => void logout().then(() => setMe(null))}>Log out</button>
        </nav>
        {me && (machine ? <Terminal key={machine.id} machine={machine} /> : <main id="main" class="terminal"><p class="big-text">Choose this terminal's machine above.</p></main>)}
      </div>
      {loginNeeded && <LoginDialog title="Machine terminal: log in" onDone={(m) => { setMe(m); setLoginNeeded(false); }} />}
    </>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
