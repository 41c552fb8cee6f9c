/**
 * The program service's console, served at `/` on its port: programs and
 * their versions (upload by drag and drop, submit), the approval queue
 * (decide; a separation-of-duties refusal is said in plain words), and
 * deployments (choose assignments, start, watch every machine's deployment
 * live). Built on the `/api/v1` operations only (PV-01): every button here
 * is one call any client can make.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, logout, onLoginNeeded, ProblemError, whoAmI, type Me } from './api.js';
import { DiffView, UnifiedView, type Diff } from './diff.js';
import { LoginDialog } from './login.js';
import { Audit, DriftTriage } from './triage.js';
import { Admin, Dashboard, Deployments, Trials } from './more.js';
import '../gateway/styles.css';
import './styles.css';

interface Page<T> { items: T[] }
interface Library { id: string; name: string }
interface Program { id: string; name: string; libraryId: string; controller: string }
interface Version { id: string; number: number; state: string; author: string; notes: string; sha256: string; size: number; createdAt: string }
interface Approval { id: string; versionId: string; programId: string; versionNumber: number; state: string; required: number; approvals: number; excluded: string[]; createdBy: string; createdAt: string }
interface Assignment { id: string; programId: string; machineId: string | null; groupId: string | null; dir: string }
interface Deployment { id: string; machineId: string; status: string; reason: string | null; batchId: string }
interface Machine { id: string; machineId: string; name: string; groupIds?: string[] }

const message = (err: unknown) => (err instanceof ProblemError ? err.message : 'The service could not be reached.');

function readBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(reader.error ?? new Error('the file could not be read'));
    reader.readAsDataURL(file);
  });
}

function DeployPanel({ program, version, onClose }: { program: Program; version: Version; onClose: () => void }) {
  const [assignments, setAssignments] = useState<Assignment[]>([]);
  const [machines, setMachines] = useState<Map<string, Machine>>(new Map());
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [deployments, setDeployments] = useState<Deployment[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [batchId, setBatchId] = useState<string | null>(null);
  const [preview, setPreview] = useState<{ target: string; fileName: string; size: number; sha256: string; text: string | null; encoding: string; diff: { identical: boolean; unified: string }; warnings: string[] } | null>(null);
  const showPreview = async (a: Assignment) => {
    setError(null);
    try {
      // For a group assignment, the preview is for its first machine (the {machine} variable, its directory).
      const body = a.machineId ? { versionId: version.id } : { versionId: version.id, machineId: [...machines.values()].find((m) => m.groupIds?.includes(a.groupId ?? ''))?.id };
      const p = await api.post<{ fileName: string; result: { size: number; sha256: string; text: string | null; encoding: string }; diff: { identical: boolean; unified: string }; warnings: string[] }>(
        `/machine-assignments/${a.id}/preview-transform`,
        body,
      );
      setPreview({ target: target(a), fileName: p.fileName, size: p.result.size, sha256: p.result.sha256, text: p.result.text, encoding: p.result.encoding, diff: p.diff, warnings: p.warnings });
    } catch (err) {
      setError(message(err));
    }
  };
  useEffect(() => {
    void Promise.all([api.get<Page<Assignment>>(`/machine-assignments?programId=${program.id}&limit=200`), api.get<Page<Machine>>('/machines?limit=1000')]).then(([a, m]) => {
      setAssignments(a.items);
      setMachines(new Map(m.items.map((x) => [x.id, x])));
      setChosen(new Set(a.items.map((x) => x.id)));
    }, (err: unknown) => setError(message(err)));
  }, [program.id]);
  useEffect(() => {
    if (!batchId) return;
    let stop = false;
    const tick = async () => {
      const page = await api.get<Page<Deployment>>(`/deployments?batchId=${batchId}&limit=1000`).catch(() => null);
      if (page) setDeployments(page.items);
      const done = page?.items.every((d) => d.status === 'Succeeded' || d.status === 'Failed');
      if (!stop && !done) setTimeout(() => void tick(), 500);
    };
    void tick();
    return () => {
      stop = true;
    };
  }, [batchId]);
  const start = async () => {
    setError(null);
    try {
      const answer = await api.post<{ batchId: string; deployments: Deployment[] }>('/deployments', { versionId: version.id, assignmentIds: [...chosen], isTrial: false, trialHours: null });
      setDeployments(answer.deployments);
      setBatchId(answer.batchId);
    } catch (err) {
      setError(message(err));
    }
  };
  const [groups, setGroups] = useState<{ id: string; name: string }[]>([]);
  const [newTarget, setNewTarget] = useState('');
  const [newDir, setNewDir] = useState('');
  useEffect(() => {
    void api.get<Page<{ id: string; name: string }>>('/machine-groups?limit=200').then((g) => setGroups(g.items), () => undefined);
  }, []);
  const addAssignment = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const [kind, id] = newTarget.split(':');
      const made = await api.post<Assignment>('/machine-assignments', { programId: program.id, ...(kind === 'group' ? { groupId: id } : { machineId: id }), ...(newDir ? { dir: newDir } : {}) });
      setAssignments([...assignments, made]);
      setChosen(new Set([...chosen, made.id]));
      setNewTarget('');
    } catch (err) {
      setError(message(err));
    }
  };
  const target = (a: Assignment) => (a.machineId ? `machine ${machines.get(a.machineId)?.machineId ?? a.machineId}` : `group ${a.groupId}`);
  return (
    <section class="card" aria-labelledby="deploy-title">
      <h2 id="deploy-title">Deploy {program.name} version {version.number}</h2>
      {assignments.length === 0 && <p>This program has no assignments yet (POST /api/v1/machine-assignments).</p>}
      <fieldset class="plain">
        <legend>Assignments</legend>
        {assignments.map((a) => (
          <label key={a.id} class="check">
            <input type="checkbox" checked={chosen.has(a.id)} disabled={batchId !== null} onChange={(e) => {
              const next = new Set(chosen);
              if (e.currentTarget.checked) next.add(a.id);
              else next.delete(a.id);
              setChosen(next);
            }} /> {target(a)} {a.dir && <code>{a.dir}</code>}
            <button type="button" class="small" onClick={() => void showPreview(a)}>Preview</button>
          </label>
        ))}
      </fieldset>
      {batchId === null && (
        <form class="inline-form" onSubmit={addAssignment} aria-label="New assignment">
          <label>Assign to <select aria-label="Assign to" required value={newTarget} onChange={(e) => setNewTarget(e.currentTarget.value)}>
            <option value="">Choose a machine or group…</option>
            {[...machines.values()].map((m) => <option key={m.id} value={`machine:${m.id}`}>machine {m.machineId} — {m.name}</option>)}
            {groups.map((g) => <option key={g.id} value={`group:${g.id}`}>group {g.name}</option>)}
          </select></label>
          <label>Directory (optional) <input value={newDir} placeholder="the machine's program directory" onInput={(e) => setNewDir(e.currentTarget.value)} /></label>
          <button type="submit">Add the assignment</button>
        </form>
      )}
      {preview && (
        <section class="preview" aria-label="Preview of the transformed program">
          <h3>What {preview.target} receives: {preview.fileName}, {preview.size} bytes, SHA-256 {preview.sha256.slice(0, 12)}…</h3>
          {preview.warnings.length > 0 && <ul class="error" role="alert" aria-label="Before you deploy">{preview.warnings.map((w) => <li key={w}>{w}</li>)}</ul>}
          {preview.diff.identical ? <p>The transform leaves the version as it is.</p> : <UnifiedView text={preview.diff.unified} />}
          {preview.text !== null && <details><summary>The whole transformed program{preview.encoding === 'utf-8' ? '' : ` (read as ${preview.encoding})`}</summary><pre class="unified">{preview.text}</pre></details>}
        </section>
      )}
      {error && <p class="error" role="alert">{error}</p>}
      {!batchId ? (
        <p class="actions">
          <button type="button" class="primary" disabled={chosen.size === 0} onClick={() => void start()}>Start deployment</button>
          <button type="button" onClick={onClose}>Cancel</button>
        </p>
      ) : (
        <>
          <table class="list" aria-label="Deployments of this batch">
            <thead><tr><th scope="col">Machine</th><th scope="col">Status</th><th scope="col">Reason</th></tr></thead>
            <tbody>{deployments.map((d) => (
              <tr key={d.id} data-deployment-status={d.status}>
                <td>{machines.get(d.machineId)?.machineId ?? d.machineId}</td>
                <td><span class={`status status-${d.status}`}>{d.status}</span></td>
                <td>{d.reason ?? ''}</td>
              </tr>
            ))}</tbody>
          </table>
          <p class="actions"><button type="button" onClick={onClose}>Close</button></p>
        </>
      )}
    </section>
  );
}

function Programs() {
  const [libraries, setLibraries] = useState<Library[]>([]);
  const [programs, setPrograms] = useState<Program[]>([]);
  const [selected, setSelected] = useState<Program | null>(null);
  const [versions, setVersions] = useState<Version[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [dragging, setDragging] = useState(false);
  const [deploying, setDeploying] = useState<Version | null>(null);
  const [diff, setDiff] = useState<Diff | null>(null);
  const compare = async (from: Version, to: Version) => {
    setError(null);
    try {
      setDiff(await api.get<Diff>(`/programs/${selected?.id ?? ''}/diff?from=${from.id}&to=${to.id}`));
    } catch (err) {
      setError(message(err));
    }
  };
  const reloadVersions = async (p: Program) => setVersions((await api.get<Page<Version>>(`/programs/${p.id}/versions?limit=200`)).items);
  useEffect(() => {
    void Promise.all([api.get<Page<Library>>('/libraries?limit=200'), api.get<Page<Program>>('/programs?limit=500')]).then(([l, p]) => {
      setLibraries(l.items);
      setPrograms(p.items);
    }, (err: unknown) => setError(message(err)));
  }, []);
  useEffect(() => {
    if (selected) void reloadVersions(selected).catch((err: unknown) => setError(message(err)));
  }, [selected?.id]);
  const upload = async (files: FileList | null) => {
    const file = files?.[0];
    if (!file || !selected) return;
    setError(null);
    try {
      const v = await api.post<Version>(`/programs/${selected.id}/versions`, { contentBase64: await readBase64(file), notes: `uploaded from ${file.name}` });
      setNotice(`Version ${v.number} uploaded (${v.size} bytes, SHA-256 ${v.sha256.slice(0, 12)}…): a draft until submitted.`);
      await reloadVersions(selected);
    } catch (err) {
      setError(message(err));
    }
  };
  const act = async (what: string, call: () => Promise<unknown>) => {
    setError(null);
    try {
      await call();
      setNotice(what);
      if (selected) await reloadVersions(selected);
    } catch (err) {
      setError(message(err));
    }
  };
  const libraryName = (id: string) => libraries.find((l) => l.id === id)?.name ?? id;
  const [newLibrary, setNewLibrary] = useState({ name: '', approvals: '1' });
  const [newProgram, setNewProgram] = useState({ name: '', libraryId: '', controller: 'fanuc' });
  const reloadAll = async () => {
    const [l, p] = await Promise.all([api.get<Page<Library>>('/libraries?limit=200'), api.get<Page<Program>>('/programs?limit=500')]);
    setLibraries(l.items);
    setPrograms(p.items);
  };
  const createLibrary = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const policy = newLibrary.approvals === '0' ? { mode: 'autoRelease' } : { mode: 'approvals', required: Number(newLibrary.approvals) };
      const lib = await api.post<Library>('/libraries', { name: newLibrary.name, approvalPolicy: policy });
      setNotice(`Library ${lib.name} made.`);
      setNewLibrary({ name: '', approvals: '1' });
      setNewProgram({ ...newProgram, libraryId: lib.id });
      await reloadAll();
    } catch (err) {
      setError(message(err));
    }
  };
  const createProgram = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const prg = await api.post<Program>('/programs', { libraryId: newProgram.libraryId || libraries[0]?.id, name: newProgram.name, controller: newProgram.controller });
      setNotice(`Program ${prg.name} made: drop its first version on the right.`);
      setNewProgram({ ...newProgram, name: '' });
      await reloadAll();
      setSelected(prg);
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <main id="main" class="split">
      <section aria-labelledby="programs-title" class="card">
        <h1 id="programs-title">Programs</h1>
        <ul class="plain-list">
          {programs.map((p) => (
            <li key={p.id}>
              <button type="button" class={`link${selected?.id === p.id ? ' current' : ''}`} aria-current={selected?.id === p.id} onClick={() => { setSelected(p); setDeploying(null); setNotice(null); setDiff(null); }}>
                {p.name}
              </button> <span class="muted">{libraryName(p.libraryId)} · {p.controller}</span>
            </li>
          ))}
        </ul>
        <details class="make">
          <summary>New program</summary>
          <form onSubmit={createProgram}>
            <label for="new-program-name">Name</label>
            <input id="new-program-name" required value={newProgram.name} onInput={(e) => setNewProgram({ ...newProgram, name: e.currentTarget.value })} />
            <label for="new-program-library">Library</label>
            <select id="new-program-library" value={newProgram.libraryId || libraries[0]?.id} onChange={(e) => setNewProgram({ ...newProgram, libraryId: e.currentTarget.value })}>{libraries.map((l) => <option key={l.id} value={l.id}>{l.name}</option>)}</select>
            <label for="new-program-controller">Controller</label>
            <select id="new-program-controller" value={newProgram.controller} onChange={(e) => setNewProgram({ ...newProgram, controller: e.currentTarget.value })}>
              {['fanuc', 'siemens', 'heidenhain', 'haas', 'mazak', 'okuma', 'mitsubishi', 'other'].map((c) => <option key={c}>{c}</option>)}
            </select>
            <button type="submit" disabled={libraries.length === 0}>Make the program</button>
          </form>
        </details>
        <details class="make">
          <summary>New library</summary>
          <form onSubmit={createLibrary}>
            <label for="new-library-name">Name</label>
            <input id="new-library-name" required value={newLibrary.name} onInput={(e) => setNewLibrary({ ...newLibrary, name: e.currentTarget.value })} />
            <label for="new-library-approvals">Approvals before a version is published</label>
            <select id="new-library-approvals" value={newLibrary.approvals} onChange={(e) => setNewLibrary({ ...newLibrary, approvals: e.currentTarget.value })}>
              <option value="0">none: published when submitted</option><option value="1">1</option><option value="2">2</option><option value="3">3</option>
            </select>
            <button type="submit">Make the library</button>
          </form>
        </details>
      </section>
      <section aria-labelledby="versions-title" class="card grow">
        <h2 id="versions-title">{selected ? `${selected.name}: versions` : 'Choose a program'}</h2>
        {error && <p class="error" role="alert">{error}</p>}
        {notice && <p class="notice" role="status">{notice}</p>}
        {selected && (
          <>
            <div class={`drop${dragging ? ' over' : ''}`} onDragOver={(e) => { e.preventDefault(); setDragging(true); }} onDragLeave={() => setDragging(false)}
              onDrop={(e) => { e.preventDefault(); setDragging(false); void upload(e.dataTransfer?.files ?? null); }}>
              <p>Drop an NC program here to upload a new version, or</p>
              <label class="button">Choose a file<input type="file" class="visually-hidden" onChange={(e) => void upload(e.currentTarget.files)} /></label>
            </div>
            <table class="list" aria-label="Versions">
              <thead><tr><th scope="col">Version</th><th scope="col">State</th><th scope="col">Author</th><th scope="col">Notes</th><th scope="col">SHA-256</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
              <tbody>{versions.map((v) => (
                <tr key={v.id} data-version={v.number} data-state={v.state}>
                  <td>{v.number}</td><td><span class={`status status-${v.state}`}>{v.state}</span></td><td>{v.author}</td><td>{v.notes}</td><td><code>{v.sha256.slice(0, 12)}</code></td>
                  <td>
                    {v.state === 'draft' && <button type="button" onClick={() => void act(`Version ${v.number} submitted for approval.`, () => api.post(`/versions/${v.id}/submit`))}>Submit</button>}
                    {(v.state === 'released' || v.state === 'published') && <button type="button" class="primary" onClick={() => setDeploying(v)}>Deploy…</button>}
                    {versions.find((w) => w.number === v.number - 1) && (
                      <button type="button" onClick={() => void compare(versions.find((w) => w.number === v.number - 1) as Version, v)}>Diff with {v.number - 1}</button>
                    )}
                  </td>
                </tr>
              ))}</tbody>
            </table>
          </>
        )}
        {selected && deploying && <DeployPanel program={selected} version={deploying} onClose={() => setDeploying(null)} />}
        {diff && <section class="card" aria-label="Differences"><DiffView diff={diff} /><p class="actions"><button type="button" onClick={() => setDiff(null)}>Close the diff</button></p></section>}
      </section>
    </main>
  );
}

function Approvals() {
  const [items, setItems] = useState<Approval[]>([]);
  const [programs, setPrograms] = useState<Map<string, Program>>(new Map());
  const [comment, setComment] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const load = async () => {
    const [a, p] = await Promise.all([api.get<Page<Approval>>('/approvals?state=pending&limit=200'), api.get<Page<Program>>('/programs?limit=500')]);
    setItems(a.items);
    setPrograms(new Map(p.items.map((x) => [x.id, x])));
  };
  useEffect(() => void load().catch((err: unknown) => setError(message(err))), []);
  const decide = async (a: Approval, decision: 'approve' | 'reject') => {
    setError(null);
    setNotice(null);
    try {
      const answer = await api.post<{ approval: Approval; version: Version }>(`/approvals/${a.id}/decide`, { decision, comment: comment[a.id] ?? '' });
      setNotice(`${programs.get(a.programId)?.name ?? a.programId} version ${a.versionNumber}: ${decision === 'approve' ? 'approved' : 'rejected'}; the version is now ${answer.version.state}.`);
      await load();
    } catch (err) {
      // A separation-of-duties refusal comes back as a problem document whose detail says who may not decide and why.
      setError(err instanceof ProblemError && (err.problem.status === 403 || err.problem.type?.includes('separation-of-duties')) ? `Not allowed: ${err.problem.detail ?? err.message}` : message(err));
    }
  };
  return (
    <main id="main">
      <h1>Approvals</h1>
      {error && <p class="error" role="alert">{error}</p>}
      {notice && <p class="notice" role="status">{notice}</p>}
      {items.length === 0 && <p>Nothing waits for approval.</p>}
      <ul class="plain-list">
        {items.map((a) => (
          <li key={a.id} class="card" data-approval={a.id}>
            <h2>{programs.get(a.programId)?.name ?? a.programId} version {a.versionNumber}</h2>
            <p class="muted">Submitted by {a.createdBy}; {a.approvals} of {a.required} approvals. Who may not approve it: {a.excluded.join(', ') || 'nobody'}.</p>
            <label for={`comment-${a.id}`}>Comment</label>
            <input id={`comment-${a.id}`} value={comment[a.id] ?? ''} onInput={(e) => setComment({ ...comment, [a.id]: e.currentTarget.value })} />
            <p class="actions">
              <button type="button" class="primary" onClick={() => void decide(a, 'approve')}>Approve</button>
              <button type="button" onClick={() => void decide(a, 'reject')}>Reject</button>
            </p>
          </li>
        ))}
      </ul>
    </main>
  );
}

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
