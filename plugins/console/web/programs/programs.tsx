/**
 * The programs page: the programs with their library, controller and file
 * name, new programs and libraries, and a chosen program's versions (upload
 * by drag and drop, submit or publish, view and download, diff with the
 * previous one, deploy). A button the caller's role cannot use is not shown.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, type Me } from './api.js';
import { DeployPanel } from './deploy.js';
import { DiffView, type Diff } from './diff.js';
import { MakeForms } from './make-forms.js';
import { byName, may, message, type Library, type Page, type Program, type Version } from './model.js';
import { DownloadLink, VersionTextView } from './version-text.js';

function readBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(reader.error ?? new Error('the file could not be read'));
    reader.readAsDataURL(file);
  });
}

/** What a row of the versions table can do; an action the caller's role may not take is null. */
interface VersionActions {
  upload: ((files: FileList | null) => Promise<void>) | null;
  submit: ((v: Version) => Promise<void>) | null;
  deploy: ((v: Version) => void) | null;
  view(v: Version): void;
  compare(from: Version, to: Version): Promise<void>;
  obsolete: ((v: Version) => Promise<void>) | null;
}

/** The drop zone for a new version (for a role that uploads) and the table of versions with their actions. */
function Versions({ program, versions, actions, current, autoRelease }: { program: Program; versions: Version[]; actions: VersionActions; current: number | null; autoRelease: boolean }) {
  const [dragging, setDragging] = useState(false);
  const upload = actions.upload;
  return (
    <>
      {upload && (
        <div class={`drop${dragging ? ' over' : ''}`} onDragOver={(e) => { e.preventDefault(); setDragging(true); }} onDragLeave={() => setDragging(false)}
          onDrop={(e) => { e.preventDefault(); setDragging(false); void upload(e.dataTransfer?.files ?? null); }}>
          <p>Drop an NC program here to upload a new version, or</p>
          <label class="button">Choose a file<input type="file" class="visually-hidden" onChange={(e) => void upload(e.currentTarget.files)} /></label>
        </div>
      )}
      <table class="list" aria-label="Versions">
        <thead><tr><th scope="col">Version</th><th scope="col">State</th><th scope="col">Author</th><th scope="col">Notes</th><th scope="col">SHA-256</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>{versions.map((v) => {
          const previous = versions.find((w) => w.number === v.number - 1);
          const label = `${program.name} version ${v.number}`;
          return (
            <tr key={v.id} data-version={v.number} data-state={v.state} class={current === v.number ? 'current' : undefined} aria-current={current === v.number ? 'true' : undefined}>
              <td><a href={`#/programs/${v.programId}/versions/${v.number}`} title={v.id}>{v.number}</a></td><td><span class={`status status-${v.state}`}>{v.state}</span></td><td>{v.author}</td><td>{v.notes}</td><td><code>{v.sha256.slice(0, 12)}</code></td>
              <td>
                <button type="button" aria-label={`View ${label}`} onClick={() => actions.view(v)}>View</button>
                <DownloadLink versionId={v.id} label={label} />
                {v.state === 'draft' && actions.submit && <button type="button" onClick={() => void actions.submit?.(v)}>{autoRelease ? 'Publish' : 'Submit for approval'}</button>}
                {(v.state === 'released' || v.state === 'published') && actions.deploy && <button type="button" class="primary" onClick={() => actions.deploy?.(v)}>Deploy…</button>}
                {previous && <button type="button" onClick={() => void actions.compare(previous, v)}>Diff with {v.number - 1}</button>}
                {actions.obsolete && v.state !== 'obsolete' && <button type="button" onClick={() => void actions.obsolete?.(v)}>Obsolete</button>}
              </td>
            </tr>
          );
        })}</tbody>
      </table>
    </>
  );
}

function ProgramList({ programs, libraries, selected, choose }: { programs: Program[]; libraries: Library[]; selected: Program | null; choose: (p: Program) => void }) {
  const libraryName = (id: string) => libraries.find((l) => l.id === id)?.name ?? id;
  if (programs.length === 0) return <p>No programs yet: make a library, then a program in it, below.</p>;
  return (
    <ul class="plain-list">
      {programs.map((p) => (
        <li key={p.id}>
          <button type="button" class={`link${selected?.id === p.id ? ' current' : ''}`} aria-current={selected?.id === p.id} title={p.id} onClick={() => choose(p)}>
            {p.name}
          </button> <span class="muted">{libraryName(p.libraryId)} · {p.controller} · file <code>{p.fileName}</code></span>
        </li>
      ))}
    </ul>
  );
}

/** The programs page; `place` is the program (and version) the URL names: `#/programs/{id}/versions/{n}`. */
/** What the page shows of the chosen program besides its versions. */
interface Shown {
  setError(text: string | null): void;
  setNotice(text: string | null): void;
  setDeploying(v: Version | null): void;
  setViewing(v: Version | null): void;
  setDiff(d: { diff: Diff; fromText: string | null } | null): void;
}

/** The versions' actions for `selected`, each only for a role that may take it. */
function versionActions(me: Me, selected: Program | null, reloadVersions: (p: Program) => Promise<void>, shown: Shown): VersionActions {
  // `call` may answer what to say; else `what` is said.
  const act = async (what: string, call: () => Promise<unknown>) => {
    shown.setError(null);
    try {
      const said = await call();
      shown.setNotice(typeof said === 'string' ? said : what);
      if (selected) await reloadVersions(selected);
    } catch (err) {
      shown.setError(message(err));
    }
  };
  return {
    upload: may(me, 'versions.upload')
      ? async (files) => {
        const file = files?.[0];
        if (!file || !selected) return;
        await act('', async () => {
          const v = await api.post<Version>(`/programs/${selected.id}/versions`, { contentBase64: await readBase64(file), notes: `uploaded from ${file.name}` });
          return `Version ${v.number} uploaded (${v.size} bytes, SHA-256 ${v.sha256.slice(0, 12)}…): a draft until submitted.`;
        });
      }
      : null,
    // The answer says what became of it: published at once in a library without approvals, else waiting for approval.
    submit: may(me, 'versions.submit')
      ? (v) => act('', async () => {
        const { version } = await api.post<{ version: Version }>(`/versions/${v.id}/submit`);
        return version.state === 'published' ? `Version ${v.number} published: it can be deployed now.` : `Version ${v.number} submitted for approval.`;
      })
      : null,
    deploy: may(me, 'deployments.create') ? shown.setDeploying : null,
    view: shown.setViewing,
    obsolete: may(me, 'versions.obsolete')
      ? (v) => act(`Version ${v.number} is obsolete: it can no longer be deployed.`, () => api.post(`/versions/${v.id}/obsolete`, { reason: 'made obsolete in the console' }))
      : null,
    async compare(from, to) {
      shown.setError(null);
      try {
        // Every line, comment-only lines included; the older text lets the folded runs be shown.
        const [diff, fromText] = await Promise.all([
          api.get<Diff>(`/programs/${selected?.id ?? ''}/diff?from=${from.id}&to=${to.id}&compare=lines`),
          api.get<{ text: string }>(`/versions/${from.id}/text`).then((t) => t.text, () => null),
        ]);
        shown.setDiff({ diff, fromText });
      } catch (err) {
        shown.setError(message(err));
      }
    },
  };
}

/** The programs page; `place` is the program (and version) the URL names: `#/programs/{id}/versions/{n}`. */
export function Programs({ place, me }: { place: { programId: string | null; version: number | null; diffFrom: number | null }; me: Me }) {
  const [libraries, setLibraries] = useState<Library[]>([]);
  const [programs, setPrograms] = useState<Program[]>([]);
  const [selected, setSelected] = useState<Program | null>(null);
  const [versions, setVersions] = useState<Version[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [deploying, setDeploying] = useState<Version | null>(null);
  const [viewing, setViewing] = useState<Version | null>(null);
  const [diff, setDiff] = useState<{ diff: Diff; fromText: string | null } | null>(null);
  const reloadVersions = async (p: Program) => setVersions((await api.get<Page<Version>>(`/programs/${p.id}/versions?limit=200`)).items);
  const reloadAll = async () => {
    const [l, p] = await Promise.all([api.get<Page<Library>>('/libraries?limit=200'), api.get<Page<Program>>('/programs?limit=500')]);
    setLibraries(l.items);
    setPrograms(byName(p.items));
  };
  useEffect(() => void reloadAll().catch((err: unknown) => setError(message(err))), []);
  // The URL names the program: a link or a reload opens it.
  useEffect(() => {
    const named = programs.find((p) => p.id === place.programId);
    if (named && named.id !== selected?.id) open(named);
  }, [place.programId, programs]);
  useEffect(() => {
    if (selected) void reloadVersions(selected).catch((err: unknown) => setError(message(err)));
  }, [selected?.id]);
  const actions = versionActions(me, selected, reloadVersions, { setError, setNotice, setDeploying, setViewing, setDiff });
  // `?diff=n` on a version's URL opens its diff with version n (the approval card links there).
  useEffect(() => {
    const from = versions.find((v) => v.number === place.diffFrom);
    const to = versions.find((v) => v.number === place.version);
    if (from && to && selected?.id === place.programId) void actions.compare(from, to);
  }, [versions, place.diffFrom, place.version]);
  function open(p: Program) {
    setSelected(p);
    setDeploying(null);
    setViewing(null);
    setNotice(null);
    setDiff(null);
  }
  const choose = (p: Program) => {
    open(p);
    if (place.programId !== p.id) location.hash = `#/programs/${p.id}`;
  };
  const autoRelease = libraries.find((l) => l.id === selected?.libraryId)?.approvalPolicy?.mode === 'autoRelease';
  return (
    <main id="main" class="split">
      <section aria-labelledby="programs-title" class="card">
        <h1 id="programs-title">Programs</h1>
        <ProgramList programs={programs} libraries={libraries} selected={selected} choose={choose} />
        <MakeForms me={me} maker={{ libraries, setError, setNotice, reloadAll, select: (p) => { setSelected(p); location.hash = `#/programs/${p.id}`; } }} />
      </section>
      <section aria-labelledby="versions-title" class="card grow">
        <h2 id="versions-title">{selected ? `${selected.name}: versions` : 'Choose a program'}</h2>
        {error && <p class="error" role="alert">{error}</p>}
        {notice && <p class="notice" role="status">{notice}</p>}
        {selected && <Versions program={selected} versions={versions} actions={actions} current={place.programId === selected.id ? place.version : null} autoRelease={autoRelease} />}
        {selected && viewing && <VersionTextView key={viewing.id} versionId={viewing.id} label={`${selected.name} version ${viewing.number}`} onClose={() => setViewing(null)} />}
        {selected && deploying && <DeployPanel program={selected} version={deploying} me={me} onClose={() => setDeploying(null)} />}
        {diff && <section class="card" aria-label="Differences"><DiffView diff={diff.diff} fromText={diff.fromText} /><p class="actions"><button type="button" onClick={() => setDiff(null)}>Close the diff</button></p></section>}
      </section>
    </main>
  );
}
