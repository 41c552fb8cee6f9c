/**
 * Machine groups on the machines page: each with where it comes from and its
 * members; rename any, change the members of a group made here, make a new
 * one. A gateway's group takes its members from the gateway (the API says
 * so with a 409), so its members are not offered for change.
 */
import { useState } from 'preact/hooks';
import { api } from './api.js';
import { byName, message } from './model.js';

export interface FleetGroup { id: string; name: string; source: 'gateway' | 'service'; machineIds: string[] }
interface Member { id: string; name: string }

function GroupForm({ group, machines, onSaved, onError }: { group: FleetGroup | null; machines: Member[]; onSaved: (text: string) => Promise<void>; onError: (text: string | null) => void }) {
  const [name, setName] = useState(group?.name ?? '');
  const [members, setMembers] = useState<string[]>(group?.machineIds ?? []);
  const membersFixed = group?.source === 'gateway';
  const save = async (e: Event) => {
    e.preventDefault();
    onError(null);
    try {
      if (group) await api.patch(`/machine-groups/${group.id}`, { name, ...(membersFixed ? {} : { machineIds: members }) });
      else await api.post('/machine-groups', { name, machineIds: members });
      await onSaved(group ? `Group ${name} saved.` : `Group ${name} made.`);
    } catch (err) {
      onError(message(err));
    }
  };
  return (
    <form class="inline-form" aria-label={group ? `Edit group ${group.name}` : 'New group'} onSubmit={save}>
      <label>Group name <input required value={name} onInput={(e) => setName(e.currentTarget.value)} /></label>
      {membersFixed ? <p class="muted">Its members follow its gateway.</p> : (
        <fieldset class="plain scope"><legend>Machines</legend>{machines.map((m) => (
          <label key={m.id} class="check"><input type="checkbox" checked={members.includes(m.id)} onChange={(e) => setMembers(e.currentTarget.checked ? [...members, m.id] : members.filter((x) => x !== m.id))} /> {m.name}</label>
        ))}</fieldset>
      )}
      <button type="submit">{group ? `Save ${group.name}` : 'Make the group'}</button>
    </form>
  );
}

export function Groups({ groups, machines, canManage, onChanged, onError }: { groups: FleetGroup[]; machines: Member[]; canManage: boolean; onChanged: (text: string) => Promise<void>; onError: (text: string | null) => void }) {
  const [editing, setEditing] = useState<string | null>(null);
  const nameOf = (id: string) => machines.find((m) => m.id === id)?.name ?? id;
  const done = async (text: string) => {
    setEditing(null);
    await onChanged(text);
  };
  return (
    <section class="card" aria-labelledby="groups-title">
      <h2 id="groups-title">Machine groups</h2>
      {groups.length === 0 && <p>No groups yet. A gateway's groups come with its sync; make one of this service below.</p>}
      <table class="list" aria-label="Machine groups">
        <thead><tr><th scope="col">Group</th><th scope="col">From</th><th scope="col">Machines</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>{byName(groups).map((g) => (
          <tr key={g.id} data-group={g.name}>
            <td title={g.id}>{g.name}</td><td>{g.source === 'gateway' ? 'its gateway' : 'this service'}</td>
            <td>{g.machineIds.map(nameOf).sort().join(', ') || '—'}</td>
            <td>{canManage && <button type="button" onClick={() => setEditing(editing === g.id ? null : g.id)}>Edit</button>}</td>
          </tr>
        ))}</tbody>
      </table>
      {canManage && editing && <GroupForm key={editing} group={groups.find((g) => g.id === editing) ?? null} machines={machines} onSaved={done} onError={onError} />}
      {canManage && !editing && <GroupForm key="new" group={null} machines={machines} onSaved={done} onError={onError} />}
    </section>
  );
}
