/**
 * The program console's home (the dashboard summary, each counter linking to
 * its list, and the latest deployments), the trials (verdict, the evidence as
 * tables, promote, pull back) and the deployments list (machine and version by
 * name, a trial pulled back from its row).
 */
import { useState } from 'preact/hooks';
import { api } from './api.js';
import { machineMap, message, statusWords, useLoad, when, type Machine, type Page, type Program } from './model.js';

interface Summary { gatewaysTotal: number; gatewaysUnreachable: number; machinesWithMirrorError: number; pendingApprovals: number; openDrift: number; activeTrials: number; failedDeployments24h: number; at: string }
interface Recent { id: string; machineName: string | null; machineId: string; fileName: string; purpose: string; status: string; waitingForSlot?: boolean; reason: string | null; createdBy: string; createdAt: string }

export function Dashboard() {
  const [summary, error] = useLoad(() => api.get<Summary>('/dashboard/summary'));
  const [recent] = useLoad(() => api.get<Page<Recent>>('/dashboard/recent-deployments?limit=20'));
  const counters: [string, keyof Summary, string][] = [
    ['Approvals waiting', 'pendingApprovals', '#/approvals'],
    ['Open drift', 'openDrift', '#/drift'],
    ['Active trials', 'activeTrials', '#/trials'],
    ['Failed deployments (24 h)', 'failedDeployments24h', '#/deployments?status=Failed'],
    ['Gateways unreachable', 'gatewaysUnreachable', '#/gateways'],
    ['Machines whose mirror fails', 'machinesWithMirrorError', '#/drift'],
  ];
  return (
    <main id="main">
      <h1>Overview</h1>
      {error && <p class="error" role="alert">{error}</p>}
      <ul class="counters" aria-label="Summary">
        {counters.map(([label, key, href]) => (
          <li key={key}><a class={`counter${summary && Number(summary[key]) > 0 ? ' attention' : ''}`} href={href} data-counter={key}><span class="n">{summary ? String(summary[key]) : '…'}</span> {label}</a></li>
        ))}
      </ul>
      <h2>Latest deployments</h2>
      <table class="list" aria-label="Latest deployments">
        <thead><tr><th scope="col">Machine</th><th scope="col">File</th><th scope="col">Purpose</th><th scope="col">Status</th><th scope="col">By</th><th scope="col">When</th></tr></thead>
        <tbody>{(recent?.items ?? []).map((d) => (
          <tr key={d.id}><td>{d.machineName ?? d.machineId}</td><td>{d.fileName}</td><td>{d.purpose}</td><td><span class={`status status-${d.status}`}>{statusWords(d)}</span>{d.reason ? ` — ${d.reason}` : ''}</td><td>{d.createdBy}</td><td>{when(d.createdAt)}</td></tr>
        ))}</tbody>
      </table>
    </main>
  );
}

interface Window { cycles: number; medianSec: number | null; from: string; to: string }
interface Evidence {
  verdict: string; failedRules: string[]; inconclusiveBecause: string | null; baseline: Window; trial: Window; cycleChangePct: number | null;
  alarms: { code: string; message: string; level: string; at: string }[]; alarmCount: number; program: string; truncated: boolean;
}
interface Trial { id: string; fileName: string; machineId: string; status: string; active: boolean; verdict: string | null; evidence: Evidence | null; evaluatedAt: string | null; endsAt: string | null; decision: { by: string; onBehalfOf: string | null; automatic: boolean; note: string } | null }

const seconds = (s: number | null) => (s === null ? '—' : `${s.toFixed(1)} s`);

/** What a trial was judged on, as tables: cycles and cycle times before and during the trial, the change, the rules that failed, the alarms. */
function EvidenceTable({ evidence: e, where }: { evidence: Evidence; where: string }) {
  const change = e.cycleChangePct === null ? 'not known yet' : `${e.cycleChangePct > 0 ? '+' : ''}${e.cycleChangePct.toFixed(1)} % (${e.cycleChangePct > 0 ? 'slower' : e.cycleChangePct < 0 ? 'faster' : 'the same'})`;
  return (
    <div class="evidence">
      <table class="list" aria-label={`Evidence of the trial on ${where}`}>
        <thead><tr><th scope="col">{e.program}</th><th scope="col">Before the trial</th><th scope="col">During the trial</th></tr></thead>
        <tbody>
          <tr><th scope="row">Cycles</th><td>{e.baseline.cycles}</td><td>{e.trial.cycles}</td></tr>
          <tr><th scope="row">Median cycle time</th><td>{seconds(e.baseline.medianSec)}</td><td>{seconds(e.trial.medianSec)}</td></tr>
          <tr><th scope="row">Read from – to</th><td>{when(e.baseline.from)} – {when(e.baseline.to)}</td><td>{when(e.trial.from)} – {when(e.trial.to)}</td></tr>
          <tr><th scope="row">Cycle time change</th><td colSpan={2}>{change}</td></tr>
          <tr><th scope="row">Alarms that judge it</th><td colSpan={2}>{e.alarmCount === 0 ? 'none' : e.alarmCount}</td></tr>
        </tbody>
      </table>
      {e.failedRules.length > 0 && <ul class="error" aria-label="Rules it failed">{e.failedRules.map((r) => <li key={r}>{r}</li>)}</ul>}
      {e.inconclusiveBecause && <p>Not judged yet: {e.inconclusiveBecause}.</p>}
      {e.alarms.length > 0 && (
        <table class="list" aria-label={`Alarms during the trial on ${where}`}>
          <thead><tr><th scope="col">When</th><th scope="col">Level</th><th scope="col">Code</th><th scope="col">Message</th></tr></thead>
          <tbody>{e.alarms.map((a, i) => <tr key={i}><td>{when(a.at)}</td><td>{a.level}</td><td>{a.code}</td><td class="wrap">{a.message}</td></tr>)}</tbody>
        </table>
      )}
      {e.truncated && <p class="muted">Only the first rows the machine reported were read; the figures cover those.</p>}
    </div>
  );
}

export function Trials({ canDecide }: { canDecide: boolean }) {
  const [trials, error, reload] = useLoad(() => api.get<Page<Trial>>('/trials?limit=100'));
  const [machines] = useLoad(() => machineMap(api.get));
  const [notice, setNotice] = useState<string | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const decide = async (t: Trial, kind: 'promote' | 'pull-back') => {
    setActionError(null);
    try {
      await api.post(`/trials/${t.id}/${kind}`, { note: '' });
      setNotice(kind === 'promote' ? `${t.fileName}: promoted; its version is now the release.` : `${t.fileName}: pulling back to the previous release.`);
      await reload();
    } catch (err) {
      setActionError(message(err));
    }
  };
  return (
    <main id="main">
      <h1>Trials</h1>
      {(error ?? actionError) && <p class="error" role="alert">{error ?? actionError}</p>}
      {notice && <p class="notice" role="status">{notice}</p>}
      {trials?.items.length === 0 && <p>No trials yet. Start one from a published version's Deploy panel (Programs).</p>}
      <ul class="plain-list">{(trials?.items ?? []).map((t) => (
        <li key={t.id} class="card" data-trial={t.id} data-status={t.status}>
          <h2>{t.fileName} on <span title={t.machineId}>{machines?.get(t.machineId)?.name ?? t.machineId}</span> <span class={`status status-${t.status}`}>{t.status}</span></h2>
          <p>Verdict: <b>{t.verdict ?? 'not yet'}</b>{t.evaluatedAt ? ` (judged ${when(t.evaluatedAt)})` : ''}{t.endsAt ? ` · ends ${when(t.endsAt)}` : ''}</p>
          {t.evidence && <EvidenceTable evidence={t.evidence} where={machines?.get(t.machineId)?.name ?? t.machineId} />}
          {t.decision && <p class="muted">Decided by {t.decision.automatic ? 'the service itself' : t.decision.by}{t.decision.onBehalfOf ? ` for ${t.decision.onBehalfOf}` : ''}{t.decision.note ? `: ${t.decision.note}` : ''}</p>}
          {canDecide && t.active && t.status === 'Active' && (
            <p class="actions">
              <button type="button" class="primary" onClick={() => void decide(t, 'promote')}>Promote</button>
              <button type="button" onClick={() => void decide(t, 'pull-back')}>Pull back</button>
            </p>
          )}
        </li>
      ))}</ul>
    </main>
  );
}

interface Deployment { id: string; machineId: string; versionId: string | null; fileName: string; purpose: string; status: string; waitingForSlot: boolean; reason: string | null; createdBy: string; createdAt: string; finishedAt: string | null }
interface VersionRef { id: string; programId: string; number: number }
interface DeploymentNames { machines: Map<string, Machine>; versions: Map<string, string>; trials: Map<string, Trial> }

/** Names for a page of deployments: machines, "program vN" per version, and the trial that follows a trial deployment. */
async function namesFor(items: Deployment[]): Promise<DeploymentNames> {
  const versionIds = [...new Set(items.map((d) => d.versionId).filter((v): v is string => v !== null))];
  const [machines, programs, versions, trials] = await Promise.all([
    machineMap(api.get), api.get<Page<Program>>('/programs?limit=1000'),
    Promise.all(versionIds.map((id) => api.get<VersionRef>(`/versions/${id}`).catch(() => null))),
    items.some((d) => d.purpose === 'trial') ? api.get<Page<Trial & { deploymentId: string }>>('/trials?limit=1000') : Promise.resolve({ items: [] }),
  ]);
  const programName = new Map(programs.items.map((p) => [p.id, p.name]));
  return {
    machines,
    versions: new Map(versions.filter((v): v is VersionRef => v !== null).map((v) => [v.id, `${programName.get(v.programId) ?? v.programId} v${v.number}`])),
    trials: new Map(trials.items.map((t) => [t.deploymentId, t])),
  };
}

export function Deployments({ status, canDecide }: { status: string; canDecide: boolean }) {
  const [page, error, reload] = useLoad(async () => {
    const p = await api.get<Page<Deployment>>(`/deployments?limit=200${status ? `&status=${encodeURIComponent(status)}` : ''}`);
    return { items: p.items, names: await namesFor(p.items) };
  }, [status]);
  const [notice, setNotice] = useState<string | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const pullBack = async (t: Trial) => {
    setActionError(null);
    try {
      await api.post(`/trials/${t.id}/pull-back`, { note: 'pulled back from the deployments list' });
      setNotice(`${t.fileName}: pulling back to the previous release.`);
      await reload();
    } catch (err) {
      setActionError(message(err));
    }
  };
  const names = page?.names;
  return (
    <main id="main">
      <h1>Deployments{status ? `: ${status}` : ''}</h1>
      {(error ?? actionError) && <p class="error" role="alert">{error ?? actionError}</p>}
      {notice && <p class="notice" role="status">{notice}</p>}
      {page?.items.length === 0 && <p>No deployments{status ? ` ${status.toLowerCase()}` : ''} yet. Deploy a published version from Programs.</p>}
      <table class="list" aria-label="Deployments">
        <thead><tr><th scope="col">Machine</th><th scope="col">Version</th><th scope="col">File</th><th scope="col">Purpose</th><th scope="col">Status</th><th scope="col">Reason</th><th scope="col">By</th><th scope="col">Started</th><th scope="col">Ended</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>{(page?.items ?? []).map((d) => {
          const trial = names?.trials.get(d.id);
          return (
            <tr key={d.id} data-deployment={d.id} data-purpose={d.purpose}>
              <td title={d.machineId}>{names?.machines.get(d.machineId)?.name ?? d.machineId}</td>
              <td title={d.versionId ?? ''}>{d.versionId ? names?.versions.get(d.versionId) ?? d.versionId : 'a snapshot'}</td>
              <td>{d.fileName}</td><td>{d.purpose}</td><td><span class={`status status-${d.status}`}>{statusWords(d)}</span></td><td class="wrap">{d.reason ?? ''}</td>
              <td>{d.createdBy}</td><td>{when(d.createdAt)}</td><td>{when(d.finishedAt)}</td>
              <td>{canDecide && trial?.active && trial.status === 'Active' && <button type="button" onClick={() => void pullBack(trial)}>Pull back the trial</button>}</td>
            </tr>
          );
        })}</tbody>
      </table>
    </main>
  );
}
