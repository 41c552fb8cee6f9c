/**
 * Deploying a version: choose its assignments (or add one), preview what a
 * machine receives, start the batch and watch every machine's deployment
 * live until each has succeeded or failed.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { UnifiedView } from './diff.js';
import { message, type Assignment, type Deployment, type Machine, type Page, type Program, type Version } from './model.js';

interface Preview { target: string; fileName: string; size: number; sha256: string; text: string | null; encoding: string; diff: { identical: boolean; unified: string }; warnings: string[] }
interface PreviewAnswer { fileName: string; result: { size: number; sha256: string; text: string | null; encoding: string }; diff: { identical: boolean; unified: string }; warnings: string[] }

/** The deployments of a batch, polled every half second until each has succeeded or failed. */
function useBatch(batchId: string | null, setDeployments: (d: Deployment[]) => void): void {
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
}

/** The form that adds an assignment of the program to a machine or a group. */
function NewAssignment({ program, machines, onMade, onError }: { program: Program; machines: Map<string, Machine>; onMade: (a: Assignment) => void; onError: (text: string | null) => void }) {
  const [groups, setGroups] = useState<{ id: string; name: string }[]>([]);
  const [newTarget, setNewTarget] = useState('');
  const [newDir, setNewDir] = useState('');
  useEffect(() => {
    void api.get<Page<{ id: string; name: string }>>('/machine-groups?limit=200').then((g) => setGroups(g.items), () => undefined);
  }, []);
  const addAssignment = async (e: Event) => {
    e.preventDefault();
    onError(null);
    try {
      const [kind, id] = newTarget.split(':');
      const made = await api.post<Assignment>('/machine-assignments', { programId: program.id, ...(kind === 'group' ? { groupId: id } : { machineId: id }), ...(newDir ? { dir: newDir } : {}) });
      onMade(made);
      setNewTarget('');
    } catch (err) {
      onError(message(err));
    }
  };
  return (
    <form class="inline-form" onSubmit={addAssignment} aria-label="New assignment">
      <label>Assign to <select aria-label="Assign to" required value={newTarget} onChange={(e) => setNewTarget(e.currentTarget.value)}>
        <option value="">Choose a machine or group…</option>
        {[...machines.values()].map((m) => <option key={m.id} value={`machine:${m.id}`}>machine {m.machineId} — {m.name}</option>)}
        {groups.map((g) => <option key={g.id} value={`group:${g.id}`}>group {g.name}</option>)}
      </select></label>
      <label>Directory (optional) <input value={newDir} placeholder="the machine's program directory" onInput={(e) => setNewDir(e.currentTarget.value)} /></label>
      <button type="submit">Add the assignment</button>
    </form>
  );
}

function PreviewView({ preview }: { preview: Preview }) {
  return (
    <section class="preview" aria-label="Preview of the transformed program">
      <h3>What {preview.target} receives: {preview.fileName}, {preview.size} bytes, SHA-256 {preview.sha256.slice(0, 12)}…</h3>
      {preview.warnings.length > 0 && <ul class="error" role="alert" aria-label="Before you deploy">{preview.warnings.map((w) => <li key={w}>{w}</li>)}</ul>}
      {preview.diff.identical ? <p>The transform leaves the version as it is.</p> : <UnifiedView text={preview.diff.unified} />}
      {preview.text !== null && <details><summary>The whole transformed program{preview.encoding === 'utf-8' ? '' : ` (read as ${preview.encoding})`}</summary><pre class="unified">{preview.text}</pre></details>}
    </section>
  );
}

function BatchView({ deployments, machines, onClose }: { deployments: Deployment[]; machines: Map<string, Machine>; onClose: () => void }) {
  return (
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
  );
}

export function DeployPanel({ program, version, onClose }: { program: Program; version: Version; onClose: () => void }) {
  const [assignments, setAssignments] = useState<Assignment[]>([]);
  const [machines, setMachines] = useState<Map<string, Machine>>(new Map());
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [deployments, setDeployments] = useState<Deployment[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [batchId, setBatchId] = useState<string | null>(null);
  const [preview, setPreview] = useState<Preview | null>(null);
  const target = (a: Assignment) => (a.machineId ? `machine ${machines.get(a.machineId)?.machineId ?? a.machineId}` : `group ${a.groupId}`);
  const showPreview = async (a: Assignment) => {
    setError(null);
    try {
      // For a group assignment, the preview is for its first machine (the {machine} variable, its directory).
      const body = a.machineId ? { versionId: version.id } : { versionId: version.id, machineId: [...machines.values()].find((m) => m.groupIds?.includes(a.groupId ?? ''))?.id };
      const p = await api.post<PreviewAnswer>(`/machine-assignments/${a.id}/preview-transform`, body);
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
  useBatch(batchId, setDeployments);
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
  const onMade = (made: Assignment) => {
    setAssignments([...assignments, made]);
    setChosen(new Set([...chosen, made.id]));
  };
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
      {batchId === null && <NewAssignment program={program} machines={machines} onMade={onMade} onError={setError} />}
      {preview && <PreviewView preview={preview} />}
      {error && <p class="error" role="alert">{error}</p>}
      {!batchId ? (
        <p class="actions">
          <button type="button" class="primary" disabled={chosen.size === 0} onClick={() => void start()}>Start deployment</button>
          <button type="button" onClick={onClose}>Cancel</button>
        </p>
      ) : (
        <BatchView deployments={deployments} machines={machines} onClose={onClose} />
      )}
    </section>
  );
}
