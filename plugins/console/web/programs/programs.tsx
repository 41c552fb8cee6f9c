/**
 * The programs page: the programs with their library and controller, new
 * programs and libraries, and a chosen program's versions (upload by drag
 * and drop, submit, diff with the previous one, deploy).
 */
import { useEffect, useState } from 'preact/hooks';
import { api, type Me } from './api.js';
import { DeployPanel } from './deploy.js';
import { DiffView, type Diff } from './diff.js';
import { byName, message, type Library, type Page, type Program, type Version } from './model.js';

const CONTROLLERS = ['fanuc', 'siemens', 'heidenhain', 'haas', 'mazak', 'okuma', 'mitsubishi', 'other'];

function readBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(reader.error ?? new Error('the file could not be read'));
    reader.readAsDataURL(file);
  });
}

/** What the forms that make programs and libraries tell the page. */
interface Maker {
  libraries: Library[];
  setError(text: string | null): void;
  setNotice(text: string): void;
  reloadAll(): Promise<void>;
  select(p: Program): void;
}

/** The two forms: a new program (in a library, for a controller) and a new library (with its approval policy). */
function MakeForms({ maker }: { maker: Maker }) {
  const { libraries } = maker;
  const [newLibrary, setNewLibrary] = useState({ name: '', approvals: '1' });
  const [newProgram, setNewProgram] = useState({ name: '', libraryId: '', controller: 'fanuc' });
  const createLibrary = async (e: Event) => {
    e.preventDefault();
    maker.setError(null);
    try {
      const policy = newLibrary.approvals === '0' ? { mode: 'autoRelease' } : { mode: 'approvals', required: Number(newLibrary.approvals) };
      const lib = await api.post<Library>('/libraries', { name: newLibrary.name, approvalPolicy: policy });
      maker.setNotice(`Library ${lib.name} made.`);
      setNewLibrary({ name: '', approvals: '1' });
      setNewProgram({ ...newProgram, libraryId: lib.id });
      await maker.reloadAll();
    } catch (err) {
      maker.setError(message(err));
    }
  };
  const createProgram = async (e: Event) => {
    e.preventDefault();
    maker.setError(null);
    try {
      const prg = await api.post<Program>('/programs', { libraryId: newProgram.libraryId || libraries[0]?.id, name: newProgram.name, controller: newProgram.controller });
      maker.setNotice(`Program ${prg.name} made: drop its first version on the right.`);
      setNewProgram({ ...newProgram, name: '' });
      await maker.reloadAll();
      maker.select(prg);
    } catch (err) {
      maker.setError(message(err));
    }
  };
  return (
    <>
      <details class="make">
        <summary>New program</summary>
        <form onSubmit={createProgram}>
          <label for="new-program-name">Name</label>
          <input id="new-program-name" required value={newProgram.name} onInput={(e) => setNewProgram({ ...newProgram, name: e.currentTarget.value })} />
          <label for="new-program-library">Library</label>
          <select id="new-program-library" value={newProgram.libraryId || libraries[0]?.id} onChange={(e) => setNewProgram({ ...newProgram, libraryId: e.currentTarget.value })}>{byName(libraries).map((l) => <option key={l.id} value={l.id}>{l.name}</option>)}</select>
          <label for="new-program-controller">Controller</label>
          <select id="new-program-controller" value={newProgram.controller} onChange={(e) => setNewProgram({ ...newProgram, controller: e.currentTarget.value })}>
            {CONTROLLERS.map((c) => <option key={c}>{c}</option>)}
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
    </>
  );
}

/** What a row of the versions table can do. */
interface VersionActions {
  upload(files: FileList | null): Promise<void>;
  act(what: string, call: () => Promise<unknown>): Promise<void>;
  deploy(v: Version): void;
  compare(from: Version, to: Version): Promise<void>;
  /** Null when the caller's role may not obsolete a version. */
  obsolete: ((v: Version) => Promise<void>) | null;
}

/** The drop zone for a new version and the table of versions with their actions. */
function Versions({ versions, actions, current }: { versions: Version[]; actions: VersionActions; current: number | null }) {
  const [dragging, setDragging] = useState(false);
  return (
    <>
      <div class={`drop${dragging ? ' over' : ''}`} onDragOver={(e) => { e.preventDefault(); setDragging(true); }} onDragLeave={() => setDragging(false)}
        onDrop={(e) => { e.preventDefault(); setDragging(false); void actions.upload(e.dataTransfer?.files ?? null); }}>
        <p>Drop an NC program here to upload a new version, or</p>
        <label class="button">Choose a file<input type="file" class="visually-hidden" onChange={(e) => void actions.upload(e.currentTarget.files)} /></label>
      </div>
      <table class="list" aria-label="Versions">
        <thead><tr><th scope="col">Version</th><th scope="col">State</th><th scope="col">Author</th><th scope="col">Notes</th><th scope="col">SHA-256</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>{versions.map((v) => {
          const previous = versions.find((w) => w.number === v.number - 1);
          return (
            <tr key={v.id} data-version={v.number} data-state={v.state} class={current === v.number ? 'current' : undefined} aria-current={current === v.number ? 'true' : undefined}>
              <td><a href={`#/programs/${v.programId}/versions/${v.number}`} title={v.id}>{v.number}</a></td><td><span class={`status status-${v.state}`}>{v.state}</span></td><td>{v.author}</td><td>{v.notes}</td><td><code>{v.sha256.slice(0, 12)}</code></td>
              <td>
                {v.state === 'draft' && <button type="button" onClick={() => void actions.act(`Version ${v.number} submitted for approval.`, () => api.post(`/versions/${v.id}/submit`))}>Submit</button>}
                {(v.state === 'released' || v.state === 'published') && <button type="button" class="primary" onClick={() => actions.deploy(v)}>Deploy…</button>}
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
          </button> <span class="muted">{libraryName(p.libraryId)} · {p.controller}</span>
        </li>
      ))}
    </ul>
  );
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
  const [diff, setDiff] = useState<Diff | null>(null);
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
  // `?diff=n` on a version's URL opens its diff with version n (the approval card links there).
  useEffect(() => {
    const from = versions.find((v) => v.number === place.diffFrom);
    const to = versions.find((v) => v.number === place.version);
    if (from && to && selected?.id === place.programId) void actions.compare(from, to);
  }, [versions, place.diffFrom, place.version]);
  const actions: VersionActions = {
    async upload(files) {
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
    },
    async act(what, call) {
      setError(null);
      try {
        await call();
        setNotice(what);
        if (selected) await reloadVersions(selected);
      } catch (err) {
        setError(message(err));
      }
    },
    deploy: setDeploying,
    obsolete: me.permissions.includes('versions.obsolete')
      ? (v) => actions.act(`Version ${v.number} is obsolete: it can no longer be deployed.`, () => api.post(`/versions/${v.id}/obsolete`, { reason: 'made obsolete in the console' }))
      : null,
    async compare(from, to) {
      setError(null);
      try {
        setDiff(await api.get<Diff>(`/programs/${selected?.id ?? ''}/diff?from=${from.id}&to=${to.id}`));
      } catch (err) {
        setError(message(err));
      }
    },
  };
  function open(p: Program) {
    setSelected(p);
    setDeploying(null);
    setNotice(null);
    setDiff(null);
  }
  const choose = (p: Program) => {
    open(p);
    if (place.programId !== p.id) location.hash = `#/programs/${p.id}`;
  };
  return (
    <main id="main" class="split">
      <section aria-labelledby="programs-title" class="card">
        <h1 id="programs-title">Programs</h1>
        <ProgramList programs={programs} libraries={libraries} selected={selected} choose={choose} />
        <MakeForms maker={{ libraries, setError, setNotice, reloadAll, select: (p) => { setSelected(p); location.hash = `#/programs/${p.id}`; } }} />
      </section>
      <section aria-labelledby="versions-title" class="card grow">
        <h2 id="versions-title">{selected ? `${selected.name}: versions` : 'Choose a program'}</h2>
        {error && <p class="error" role="alert">{error}</p>}
        {notice && <p class="notice" role="status">{notice}</p>}
        {selected && <Versions versions={versions} actions={actions} current={place.programId === selected.id ? place.version : null} />}
        {selected && deploying && <DeployPanel program={selected} version={deploying} onClose={() => setDeploying(null)} />}
        {diff && <section class="card" aria-label="Differences"><DiffView diff={diff} /><p class="actions"><button type="button" onClick={() => setDiff(null)}>Close the diff</button></p></section>}
      </section>
    </main>
  );
}
