/**
 * Deploying a version: choose its assignments (add, change or remove one,
 * with the file name the machine gets), preview what a machine receives, start the batch — as a release or as a
 * trial with its hours and rules — and watch every machine's deployment
 * live until each has succeeded or failed.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, type Me } from './api.js';
import { AssignmentRow, NewAssignment } from './assignment-form.js';
import { UnifiedView } from './diff.js';
import { may, message, statusWords, type Assignment, type Deployment, type Group, type Machine, type Page, type Program, type Version } from './model.js';
import { TrialOptions, trialBody, type Trial } from './deploy-parts.js';

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
            <td title={d.machineId}>{machines.get(d.machineId)?.name ?? d.machineId}</td>
            <td><span class={`status status-${d.status}`}>{statusWords(d)}</span></td>
            <td class="wrap">{d.reason ?? ''}</td>
          </tr>
        ))}</tbody>
      </table>
      <p class="actions"><button type="button" onClick={onClose}>Close</button></p>
    </>
  );
}

export function DeployPanel({ program, version, me, onClose }: { program: Program; version: Version; me: Me; onClose: () => void }) {
  const [assignments, setAssignments] = useState<Assignment[]>([]);
  const [machines, setMachines] = useState<Map<string, Machine>>(new Map());
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [deployments, setDeployments] = useState<Deployment[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [batchId, setBatchId] = useState<string | null>(null);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [groups, setGroups] = useState<Group[]>([]);
  const [trial, setTrial] = useState<Trial>({ on: false, hours: '24', maxCycleTimeIncreasePct: '10', minCycles: '3', failOnAlarms: true });
  const canManage = may(me, 'assignments.manage');
  const target = (a: Assignment) => (a.machineId ? machines.get(a.machineId)?.name ?? a.machineId : `group ${groups.find((g) => g.id === a.groupId)?.name ?? a.groupId ?? ''}`);
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
    void Promise.all([api.get<Page<Assignment>>(`/machine-assignments?programId=${program.id}&limit=200`), api.get<Page<Machine>>('/machines?limit=1000'), api.get<Page<Group>>('/machine-groups?limit=1000')]).then(([a, m, g]) => {
      setAssignments(a.items);
      setMachines(new Map(m.items.map((x) => [x.id, x])));
      setGroups(g.items);
      setChosen(new Set(a.items.map((x) => x.id)));
    }, (err: unknown) => setError(message(err)));
  }, [program.id]);
  useBatch(batchId, setDeployments);
  const start = async () => {
    setError(null);
    try {
      const answer = await api.post<{ batchId: string; deployments: Deployment[] }>('/deployments', { versionId: version.id, assignmentIds: [...chosen], ...trialBody(trial) });
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
      {assignments.length === 0 && <p>This program is not assigned to any machine yet{canManage ? ': choose a machine or a group below.' : '; someone who manages assignments (a programmer) assigns it.'}</p>}
      <fieldset class="plain">
        <legend>Assignments</legend>
        {assignments.map((a) => (
          <AssignmentRow key={a.id} assignment={a} label={target(a)} title={a.machineId ?? a.groupId ?? ''} chosen={chosen.has(a.id)} locked={batchId !== null} onError={setError}
            machineId={a.machineId ? machines.get(a.machineId)?.machineId ?? null : [...machines.values()].find((m) => m.groupIds?.includes(a.groupId ?? ''))?.machineId ?? null}
            program={program} version={version} canManage={canManage}
            onChoose={(on) => {
              const next = new Set(chosen);
              if (on) next.add(a.id);
              else next.delete(a.id);
              setChosen(next);
            }}
            onPreview={() => void showPreview(a)}
            onChanged={(changed) => setAssignments(assignments.map((x) => (x.id === a.id ? changed : x)))}
            onRemoved={() => {
              setAssignments(assignments.filter((x) => x.id !== a.id));
              const next = new Set(chosen);
              next.delete(a.id);
              setChosen(next);
            }} />
        ))}
      </fieldset>
      {batchId === null && canManage && <NewAssignment program={program} version={version} machines={machines} groups={groups} onMade={onMade} onError={setError} />}
      {batchId === null && <TrialOptions trial={trial} onChange={setTrial} />}
      {preview && <PreviewView preview={preview} />}
      {error && <p class="error" role="alert">{error}</p>}
      {!batchId ? (
        <p class="actions">
          <button type="button" class="primary" disabled={chosen.size === 0} onClick={() => void start()}>{trial.on ? 'Start the trial' : 'Start deployment'}</button>
          <button type="button" onClick={onClose}>Cancel</button>
        </p>
      ) : (
        <BatchView deployments={deployments} machines={machines} onClose={onClose} />
      )}
    </section>
  );
}
