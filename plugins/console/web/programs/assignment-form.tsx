/**
 * An assignment in the deploy panel: made (a machine or a group, its
 * directory, the file name on the machine and header lines, with the name the
 * template gives shown while it is typed), changed, removed, chosen for the
 * batch and previewed. Making, changing and removing are offered only to a
 * role with `assignments.manage`; the service checks the name against the
 * machine's control and says in words what it takes.
 */
import { useState } from 'preact/hooks';
import { api } from './api.js';
import { renderName, transferValues } from './file-name.js';
import { byName, message, type Assignment, type Group, type Machine, type Program, type Version } from './model.js';

/** The fields of the file a machine gets: the file name template and the header lines. */
export interface FileFields { fileName: string; header: string }

const headerLines = (text: string) => text.split('\n').map((l) => l.trimEnd()).filter((l) => l !== '');

/** The file name and header inputs, and the name the template gives for `machineId`. */
function FileNameFields({ id, fields, onChange, program, version, machineId }: { id: string; fields: FileFields; onChange: (f: FileFields) => void; program: Program; version: Version; machineId: string | null }) {
  const gives = machineId ? renderName(fields.fileName, transferValues(program, version, machineId)) : null;
  return (
    <>
      <label>File name on the machine <input value={fields.fileName} required aria-describedby={`${id}-gives`} onInput={(e) => onChange({ ...fields, fileName: e.currentTarget.value })} /></label>
      <label>Header lines (one a line) <textarea rows={2} value={fields.header} placeholder="(V{version} {sha8} {date})" onInput={(e) => onChange({ ...fields, header: e.currentTarget.value })} /></label>
      <p id={`${id}-gives`} class="muted gives" aria-live="polite">{gives !== null ? <>The machine gets <code data-file-name>{gives}</code></> : 'Choose a machine or group to see the name it gets.'}</p>
    </>
  );
}

/** The machine whose name a target's preview shows: the machine, or the group's first member. */
const machineOfTarget = (target: string, machines: Map<string, Machine>): string | null => {
  const [kind, id] = target.split(':');
  if (kind === 'machine') return machines.get(id ?? '')?.machineId ?? null;
  if (kind === 'group') return [...machines.values()].find((m) => m.groupIds?.includes(id ?? ''))?.machineId ?? null;
  return null;
};

/** The form that adds an assignment of the program to a machine or a group. */
export function NewAssignment({ program, version, machines, groups, onMade, onError }: { program: Program; version: Version; machines: Map<string, Machine>; groups: Group[]; onMade: (a: Assignment) => void; onError: (text: string | null) => void }) {
  const [target, setTarget] = useState('');
  const [dir, setDir] = useState('');
  const [file, setFile] = useState<FileFields>({ fileName: program.fileName, header: '' });
  const submit = async (e: Event) => {
    e.preventDefault();
    onError(null);
    try {
      const [kind, id] = target.split(':');
      const made = await api.post<Assignment>('/machine-assignments', {
        programId: program.id, ...(kind === 'group' ? { groupId: id } : { machineId: id }), ...(dir ? { dir } : {}), transform: { fileName: file.fileName, header: headerLines(file.header) },
      });
      onMade(made);
      setTarget('');
    } catch (err) {
      onError(message(err));
    }
  };
  return (
    <form class="inline-form" onSubmit={submit} aria-label="New assignment">
      <label>Assign to <select aria-label="Assign to" required value={target} onChange={(e) => setTarget(e.currentTarget.value)}>
        <option value="">Choose a machine or group…</option>
        {byName([...machines.values()].filter((m) => m.present !== false)).map((m) => <option key={m.id} value={`machine:${m.id}`} title={m.id}>{m.name} ({m.machineId})</option>)}
        {byName(groups).map((g) => <option key={g.id} value={`group:${g.id}`} title={g.id}>group {g.name}</option>)}
      </select></label>
      <label>Directory <input value={dir} placeholder="the machine's own, if it has one" onInput={(e) => setDir(e.currentTarget.value)} /></label>
      <FileNameFields id="new-assignment" fields={file} onChange={setFile} program={program} version={version} machineId={machineOfTarget(target, machines)} />
      <button type="submit">Add the assignment</button>
    </form>
  );
}

export interface AssignmentRowProps {
  assignment: Assignment;
  label: string;
  title: string;
  /** The machine the file name is shown for (the machine, or a group's first member). */
  machineId: string | null;
  program: Program;
  version: Version;
  chosen: boolean;
  locked: boolean;
  /** Whether the role may change and remove assignments. */
  canManage: boolean;
  onChoose(on: boolean): void;
  onPreview(): void;
  onChanged(a: Assignment): void;
  onRemoved(): void;
  onError(text: string | null): void;
}

export function AssignmentRow(props: AssignmentRowProps) {
  const { assignment: a, label } = props;
  const [editing, setEditing] = useState(false);
  const [dir, setDir] = useState(a.dir);
  const [file, setFile] = useState<FileFields>({ fileName: a.transform.fileName, header: a.transform.header.join('\n') });
  const run = async (call: () => Promise<void>) => {
    props.onError(null);
    try {
      await call();
    } catch (err) {
      props.onError(message(err));
    }
  };
  const save = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      // The transform is sent whole, as the service takes it: its other rules stay as they are.
      props.onChanged(await api.patch<Assignment>(`/machine-assignments/${a.id}`, { dir, transform: { ...a.transform, fileName: file.fileName, header: headerLines(file.header) } }));
      setEditing(false);
    });
  };
  const gives = props.machineId ? renderName(a.transform.fileName, transferValues(props.program, props.version, props.machineId, a.transform.programNumber)) : a.transform.fileName;
  const manage = props.canManage && !props.locked;
  return (
    <div class="assignment" data-assignment={label}>
      <label class="check" title={props.title}>
        <input type="checkbox" checked={props.chosen} disabled={props.locked} onChange={(e) => props.onChoose(e.currentTarget.checked)} /> {label} {a.dir ? <code data-dir>{a.dir}</code> : <span class="muted">(the machine's directory)</span>} <span class="muted">as</span> <code data-file-name>{gives}</code>
      </label>
      <button type="button" class="small" onClick={props.onPreview}>Preview</button>
      {manage && <button type="button" class="small" aria-expanded={editing} onClick={() => setEditing(!editing)}>Change</button>}
      {manage && <button type="button" class="small" onClick={() => void run(async () => { await api.delete(`/machine-assignments/${a.id}`); props.onRemoved(); })}>Remove</button>}
      {editing && manage && (
        <form class="inline-form" aria-label={`Change the assignment to ${label}`} onSubmit={save}>
          <label>Directory <input value={dir} placeholder="the machine's own, if it has one" onInput={(e) => setDir(e.currentTarget.value)} /></label>
          <FileNameFields id={`change-${a.id}`} fields={file} onChange={setFile} program={props.program} version={props.version} machineId={props.machineId} />
          <button type="submit">Save the assignment</button>
        </form>
      )}
    </div>
  );
}
