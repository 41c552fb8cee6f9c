/**
 * The forms that make a program (in a library, for a controller, with its
 * file name on the machines) and a library (with its approval policy). The
 * file name follows the program's number while the name is typed (`O1234
 * Flange OP10` → `O1234`) until it is edited itself.
 */
import { useState } from 'preact/hooks';
import { api, type Me } from './api.js';
import { defaultFileName, renderName } from './file-name.js';
import { byName, may, message, type Library, type Program } from './model.js';

const CONTROLLERS = ['fanuc', 'siemens', 'heidenhain', 'haas', 'mazak', 'okuma', 'mitsubishi', 'other'];

/** What the forms that make programs and libraries tell the page. */
export interface Maker {
  libraries: Library[];
  setError(text: string | null): void;
  setNotice(text: string): void;
  reloadAll(): Promise<void>;
  select(p: Program): void;
}

/** `lastLibrary`: the library made last on this page, which a new program goes to unless another is chosen. */
function NewProgram({ maker, lastLibrary }: { maker: Maker; lastLibrary: string }) {
  const { libraries } = maker;
  const empty = { name: '', libraryId: '', controller: 'fanuc', fileName: '', fileNameEdited: false };
  const [form, setForm] = useState(empty);
  const fileName = form.fileNameEdited ? form.fileName : defaultFileName(form.name);
  const libraryId = form.libraryId || lastLibrary || libraries[0]?.id;
  const submit = async (e: Event) => {
    e.preventDefault();
    maker.setError(null);
    try {
      const prg = await api.post<Program>('/programs', { libraryId, name: form.name, controller: form.controller, fileName });
      maker.setNotice(`Program ${prg.name} made (file name on the machines: ${prg.fileName}): drop its first version on the right.`);
      setForm({ ...empty, libraryId: form.libraryId, controller: form.controller });
      await maker.reloadAll();
      maker.select(prg);
    } catch (err) {
      maker.setError(message(err));
    }
  };
  return (
    <details class="make">
      <summary>New program</summary>
      <form onSubmit={submit}>
        <label for="new-program-name">Name</label>
        <input id="new-program-name" required value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
        <label for="new-program-file-name">File name on the machines</label>
        <input id="new-program-file-name" required value={fileName} aria-describedby="new-program-file-name-help"
          onInput={(e) => setForm({ ...form, fileName: e.currentTarget.value, fileNameEdited: true })} />
        <p id="new-program-file-name-help" class="muted">
          The machines get <code>{renderName(fileName, { program: form.name }) || 'the program\'s name'}</code>: its program number when its name starts with one.
          A controller takes only its own kind of name (O1234 on a FANUC, NAME.MPF on a Siemens).
        </p>
        <label for="new-program-library">Library</label>
        <select id="new-program-library" value={libraryId} onChange={(e) => setForm({ ...form, libraryId: e.currentTarget.value })}>{byName(libraries).map((l) => <option key={l.id} value={l.id}>{l.name}</option>)}</select>
        <label for="new-program-controller">Controller</label>
        <select id="new-program-controller" value={form.controller} onChange={(e) => setForm({ ...form, controller: e.currentTarget.value })}>
          {CONTROLLERS.map((c) => <option key={c}>{c}</option>)}
        </select>
        <button type="submit" disabled={libraries.length === 0}>Make the program</button>
      </form>
    </details>
  );
}

function NewLibrary({ maker, onMade }: { maker: Maker; onMade: (lib: Library) => void }) {
  const [form, setForm] = useState({ name: '', approvals: '1' });
  const submit = async (e: Event) => {
    e.preventDefault();
    maker.setError(null);
    try {
      const policy = form.approvals === '0' ? { mode: 'autoRelease' } : { mode: 'approvals', required: Number(form.approvals) };
      const lib = await api.post<Library>('/libraries', { name: form.name, approvalPolicy: policy });
      maker.setNotice(`Library ${lib.name} made.`);
      setForm({ name: '', approvals: '1' });
      onMade(lib);
      await maker.reloadAll();
    } catch (err) {
      maker.setError(message(err));
    }
  };
  return (
    <details class="make">
      <summary>New library</summary>
      <form onSubmit={submit}>
        <label for="new-library-name">Name</label>
        <input id="new-library-name" required value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
        <label for="new-library-approvals">Approvals before a version is published</label>
        <select id="new-library-approvals" value={form.approvals} onChange={(e) => setForm({ ...form, approvals: e.currentTarget.value })}>
          <option value="0">none: published when submitted</option><option value="1">1</option><option value="2">2</option><option value="3">3</option>
        </select>
        <button type="submit">Make the library</button>
      </form>
    </details>
  );
}

/** The forms the caller's role may use: a new program (programs.write), a new library (libraries.manage). */
export function MakeForms({ maker, me }: { maker: Maker; me: Me }) {
  const [last, setLast] = useState('');
  return (
    <>
      {may(me, 'programs.write') && <NewProgram maker={maker} lastLibrary={last} />}
      {may(me, 'libraries.manage') && <NewLibrary maker={maker} onMade={(lib) => setLast(lib.id)} />}
    </>
  );
}
