/**
 * Drift triage and the audit. Drift: every open item with the NC-aware diff
 * of what was released against what is on the machine; accept (the
 * machine's content becomes a new draft version, nothing released changes)
 * or reject (the released version goes back on the machine, verified),
 * offered to a role with drift.manage.
 * Audit: the newest records with filters, the CSV export, and the chain's
 * verification (the first broken record, if any).
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ProblemError, type Me } from './api.js';
import { UnifiedView } from './diff.js';
import { byName } from './model.js';
import { namesFor } from './names.js';

interface Page<T> { items: T[] }
interface Drift { id: string; machineId: string; fileName: string; dir: string; status: string; openedAt: string; expected: { source: string; versionId: string; sha256: string }; foundSha256: string | null; resultVersionId: string | null; resultDeploymentId: string | null }
interface DriftDetail extends Drift { diff: { identical: boolean; summary: Record<string, unknown>; unified: string } | null }
interface Machine { id: string; machineId: string; name: string }
interface MachineFile { id: string; dir: string; name: string; sha256: string | null; size: number | null; present: boolean; adoptedProgramId: string | null; lastSeenAt: string | null }
interface Snapshot { id: string; sha256: string; size: number; takenAt: string; trigger: string }
interface Library { id: string; name: string }
interface AuditRecord { seq: number; time: string; principalName: string; onBehalfOf: string | null; category: string; action: string; entityType: string | null; entityId: string | null; machine: string | null }

const message = (err: unknown) => (err instanceof ProblemError ? err.message : 'The service could not be reached.');

export function DriftTriage({ canManage }: { canManage: boolean }) {
  const [items, setItems] = useState<Drift[]>([]);
  const [machines, setMachines] = useState<Map<string, string>>(new Map());
  const [open, setOpen] = useState<DriftDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [note, setNote] = useState('');
  const load = async () => {
    const [d, m] = await Promise.all([api.get<Page<Drift>>('/drift?status=open&limit=200'), api.get<Page<Machine>>('/machines?limit=1000')]);
    setItems(d.items);
    setMachines(new Map(m.items.map((x) => [x.id, x.name])));
  };
  useEffect(() => void load().catch((err: unknown) => setError(message(err))), []);
  const show = async (d: Drift) => {
    setError(null);
    try {
      setOpen(await api.get<DriftDetail>(`/drift/${d.id}`));
    } catch (err) {
      setError(message(err));
    }
  };
  const decide = async (d: Drift, how: 'accept' | 'reject') => {
    setError(null);
    try {
      const after = await api.post<Drift>(`/drift/${d.id}/${how}`, { note });
      setOpen(null);
      setNote('');
      // The list is read again before the outcome is said, so what the page says done is gone from the list.
      await load();
      setNotice(how === 'accept'
        ? `Accepted: the machine's ${d.fileName} is now draft version ${after.resultVersionId ?? ''}; it still needs approval.`
        : `Rejected: the released ${d.fileName} is being deployed back (${after.resultDeploymentId ?? ''}).`);
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <main id="main">
      <h1>Drift</h1>
      {error && <p class="error" role="alert">{error}</p>}
      {notice && <p class="notice" role="status">{notice}</p>}
      {items.length === 0 && <p>No machine file differs from what was released.</p>}
      <table class="list" aria-label="Open drift items">
        <thead><tr><th scope="col">Machine</th><th scope="col">File</th><th scope="col">Expected</th><th scope="col">Found</th><th scope="col">Opened</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>{items.map((d) => (
          <tr key={d.id} data-drift={d.id}>
            <td>{machines.get(d.machineId) ?? d.machineId}</td><td><code>{d.dir}{d.fileName}</code></td>
            <td><code>{d.expected.sha256.slice(0, 10)}</code> ({d.expected.source})</td><td><code>{d.foundSha256?.slice(0, 10) ?? 'missing'}</code></td>
            <td>{new Date(d.openedAt).toLocaleString()}</td>
            <td><button type="button" onClick={() => void show(d)}>Review…</button></td>
          </tr>
        ))}</tbody>
      </table>
      {open && (
        <section class="card" aria-labelledby="drift-title">
          <h2 id="drift-title">{machines.get(open.machineId) ?? open.machineId}: {open.fileName}, released against what is on the machine</h2>
          {open.diff ? <UnifiedView text={open.diff.unified} /> : <p>The file is missing on the machine.</p>}
          {canManage && (
            <>
              <label for="drift-note">Note</label>
              <input id="drift-note" value={note} onInput={(e) => setNote(e.currentTarget.value)} />
            </>
          )}
          <p class="actions">
            {canManage && <button type="button" class="primary" onClick={() => void decide(open, 'accept')}>Accept the machine's version</button>}
            {canManage && <button type="button" onClick={() => void decide(open, 'reject')}>Reject: put the released version back</button>}
            <button type="button" onClick={() => setOpen(null)}>Close</button>
          </p>
        </section>
      )}
      <MachineFiles canManage={canManage} />
    </main>
  );
}

/** A machine's files as the mirror last read them: adopt one (or all) into the vault as drafts; see a file's snapshots and put one back. */
export function MachineFiles({ canManage }: { canManage: boolean }) {
  const [machines, setMachines] = useState<Machine[]>([]);
  const [libraries, setLibraries] = useState<Library[]>([]);
  const [machineId, setMachineId] = useState('');
  const [libraryId, setLibraryId] = useState('');
  const [files, setFiles] = useState<MachineFile[]>([]);
  const [snapshots, setSnapshots] = useState<{ file: MachineFile; items: Snapshot[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  useEffect(() => {
    void Promise.all([api.get<Page<Machine>>('/machines?limit=1000'), api.get<Page<Library>>('/libraries?limit=200')]).then(([m, l]) => {
      setMachines(m.items);
      setLibraries(l.items);
      setLibraryId(l.items[0]?.id ?? '');
    }, (err: unknown) => setError(message(err)));
  }, []);
  const load = async (id: string) => setFiles(id ? (await api.get<Page<MachineFile>>(`/machine-files?machineId=${id}&limit=500`)).items : []);
  useEffect(() => void load(machineId).catch((err: unknown) => setError(message(err))), [machineId]);
  const run = async (done: string, call: () => Promise<unknown>) => {
    setError(null);
    setNotice(null);
    try {
      await call();
      setNotice(done);
      await load(machineId);
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <section class="card" aria-labelledby="files-title">
      <h2 id="files-title">Files on a machine</h2>
      <div class="inline-form">
        <label>Machine <select aria-label="Machine" value={machineId} onChange={(e) => setMachineId(e.currentTarget.value)}><option value="">Choose…</option>{byName(machines).map((m) => <option key={m.id} value={m.id} title={m.id}>{m.name} ({m.machineId})</option>)}</select></label>
        {canManage && <label>Adopt into <select aria-label="Adopt into" value={libraryId} onChange={(e) => setLibraryId(e.currentTarget.value)}>{libraries.map((l) => <option key={l.id} value={l.id}>{l.name}</option>)}</select></label>}
        {canManage && machineId && <button type="button" onClick={() => void run('Every file not under management was adopted as a draft version.', () => api.post(`/machines/${machineId}/adopt-all`, { libraryId }))}>Adopt all</button>}
      </div>
      {error && <p class="error" role="alert">{error}</p>}
      {notice && <p class="notice" role="status">{notice}</p>}
      {machineId && (
        <table class="list" aria-label="Files on the machine">
          <thead><tr><th scope="col">File</th><th scope="col">SHA-256</th><th scope="col">Managed</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>{files.map((f) => (
            <tr key={f.id} data-file={f.name}>
              <td><code>{f.dir}{f.name}</code>{f.present ? '' : ' (gone)'}</td><td><code>{f.sha256?.slice(0, 10) ?? ''}</code></td><td>{f.adoptedProgramId ? 'adopted' : ''}</td>
              <td>
                {canManage && !f.adoptedProgramId && <button type="button" onClick={() => void run(`${f.name} adopted as a draft version.`, () => api.post(`/machine-files/${f.id}/adopt`, { libraryId }))}>Adopt</button>}
                <button type="button" onClick={() => void api.get<Page<Snapshot>>(`/machine-files/${f.id}/snapshots?limit=50`).then((p) => setSnapshots({ file: f, items: p.items }), (err: unknown) => setError(message(err)))}>Snapshots</button>
              </td>
            </tr>
          ))}</tbody>
        </table>
      )}
      {snapshots && (
        <div aria-label={`Snapshots of ${snapshots.file.name}`} role="region">
          <h3>Snapshots of {snapshots.file.name}</h3>
          <table class="list"><thead><tr><th scope="col">Taken</th><th scope="col">SHA-256</th><th scope="col">Size</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
            <tbody>{snapshots.items.map((sn) => (
              <tr key={sn.id}><td>{new Date(sn.takenAt).toLocaleString()} ({sn.trigger})</td><td><code>{sn.sha256.slice(0, 10)}</code></td><td>{sn.size}</td>
                <td>{canManage && <button type="button" onClick={() => void run(`The snapshot of ${new Date(sn.takenAt).toLocaleString()} is going back on the machine, verified.`, () => api.post(`/machine-files/${snapshots.file.id}/restore`, { snapshotId: sn.id, note: '' }))}>Restore</button>}</td></tr>
            ))}</tbody></table>
        </div>
      )}
    </section>
  );
}

export function Audit({ me }: { me: Me }) {
  const [records, setRecords] = useState<AuditRecord[]>([]);
  const [names, setNames] = useState<Map<string, string>>(new Map());
  const [category, setCategory] = useState('');
  const [principal, setPrincipal] = useState('');
  const [verdict, setVerdict] = useState<{ intact: boolean; checked: number; firstBrokenSeq: number | null } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const query = () => [category && `category=${encodeURIComponent(category)}`, principal && `principalName=${encodeURIComponent(principal)}`].filter(Boolean).join('&');
  const load = async () => {
    setError(null);
    try {
      const items = (await api.get<Page<AuditRecord>>(`/audit?limit=200${query() ? `&${query()}` : ''}`)).items;
      setNames(await namesFor(items.flatMap((r) => [r.entityId ?? '', r.machine ?? '']).filter(Boolean), me.permissions));
      setRecords(items);
    } catch (err) {
      setError(message(err));
    }
  };
  useEffect(() => void load(), []);
  const verify = async () => {
    setError(null);
    try {
      setVerdict(await api.get('/audit/verify'));
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <main id="main">
      <h1>Audit</h1>
      <form class="filters" onSubmit={(e) => { e.preventDefault(); void load(); }}>
        <label>Category <input value={category} onInput={(e) => setCategory(e.currentTarget.value)} /></label>
        <label>User <input value={principal} onInput={(e) => setPrincipal(e.currentTarget.value)} /></label>
        <button type="submit">Filter</button>
        <a class="button" href={`/api/v1/audit/export?format=csv${query() ? `&${query()}` : ''}`} download="audit.csv">Export CSV</a>
        <button type="button" class="primary" onClick={() => void verify()}>Verify the chain</button>
      </form>
      {error && <p class="error" role="alert">{error}</p>}
      {verdict && (
        <p role="status" class={verdict.intact ? 'notice' : 'error'} data-intact={String(verdict.intact)}>
          {verdict.intact ? `Intact: ${verdict.checked} records checked, every hash links to the one before.` : `Broken: the chain breaks at record ${verdict.firstBrokenSeq} (${verdict.checked} checked).`}
        </p>
      )}
      <table class="list" aria-label="Audit records">
        <thead><tr><th scope="col">#</th><th scope="col">Time</th><th scope="col">Who</th><th scope="col">On behalf of</th><th scope="col">Action</th><th scope="col">Entity</th><th scope="col">Machine</th></tr></thead>
        <tbody>{records.map((r) => (
          <tr key={r.seq} data-action={r.action}>
            <td>{r.seq}</td><td>{new Date(r.time).toLocaleString()}</td><td>{r.principalName}</td><td>{r.onBehalfOf ?? ''}</td><td>{r.action}</td><td title={r.entityId ?? ''}>{r.entityType} {(r.entityId && names.get(r.entityId)) ?? r.entityId}</td><td title={r.machine ?? ''}>{(r.machine && names.get(r.machine)) ?? r.machine ?? ''}</td>
          </tr>
        ))}</tbody>
      </table>
    </main>
  );
}
