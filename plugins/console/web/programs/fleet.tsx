/**
 * The fleet as the program service knows it: machines with the service's
 * settings for each (program directory, mirror and its interval) and their
 * groups, editable by whoever may manage the fleet; and the gateways with
 * their reachability, last sync and last error — register a remote one
 * (synced at once), sync one now — with where its key is made and which of
 * its interfaces the key's user needs.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { byName, message, type Page } from './model.js';
import { Groups, type FleetGroup } from './fleet-groups.js';
import { GATEWAY_INTERFACES_NEEDED } from './gateway-needs.js';

interface FleetMachine { id: string; machineId: string; name: string; driver: string; present: boolean; gatewayId: string; groupIds: string[]; programDir: string; mirror: { enabled: boolean; intervalSec: number } }
interface Gateway { id: string; name: string; kind: string; url: string; host: string | null; reachable: boolean; lastContactAt: string | null; lastError: string | null; lastErrorAt: string | null; lastSyncAt: string | null }
interface SyncReport { machines: { added: { count: number }; changed: unknown[]; gone: { count: number }; returned: { count: number }; unchanged: number } }

const syncWords = (m: SyncReport['machines']) => `${m.added.count} machines added, ${m.changed.length} changed, ${m.gone.count} gone, ${m.returned.count} back, ${m.unchanged} unchanged`;

/** Where a remote gateway's secret key comes from, and which of its interfaces the key's user needs. */
function KeyHelp() {
  return (
    <details class="key-help">
      <summary>Where to make the gateway's secret key, and what it needs</summary>
      <p>
        Make the key on that gateway: in its fleet console (its address, port 8080), <i>System</i>, <i>Make a key</i>, as an administrator;
        or with <code>POST /api/security/secret-key/create</code>. The key is shown once: paste it here. It acts as the user it is made for:
        an administrator may call every interface; any other user needs these in their authorised API list:
      </p>
      <ul class="needs">{GATEWAY_INTERFACES_NEEDED.map((n) => <li key={n.path}><code>{n.path}</code> — {n.why}</li>)}</ul>
    </details>
  );
}

const when = (s: string | null) => (s ? new Date(s).toLocaleString() : 'never');

function MachineEditor({ machine, onSaved, onError }: { machine: FleetMachine; onSaved: (text: string) => void; onError: (text: string | null) => void }) {
  const [dir, setDir] = useState(machine.programDir);
  const [mirror, setMirror] = useState(machine.mirror.enabled);
  const [every, setEvery] = useState(String(machine.mirror.intervalSec));
  const save = async (e: Event) => {
    e.preventDefault();
    onError(null);
    try {
      await api.patch(`/machines/${machine.id}`, { programDir: dir, mirror: { enabled: mirror, intervalSec: Number(every) } });
      onSaved(`${machine.name}: saved.`);
    } catch (err) {
      onError(message(err));
    }
  };
  return (
    <form class="inline-form" aria-label={`Settings of ${machine.name}`} onSubmit={save}>
      <label>Program directory <input value={dir} placeholder="e.g. //CNC_MEM/USER/PATH1/" onInput={(e) => setDir(e.currentTarget.value)} /></label>
      <label class="check"><input type="checkbox" checked={mirror} onChange={(e) => setMirror(e.currentTarget.checked)} /> read its files (mirror)</label>
      <label>Every (seconds) <input type="number" min={30} max={86400} value={every} onInput={(e) => setEvery(e.currentTarget.value)} /></label>
      <button type="submit">Save {machine.name}</button>
    </form>
  );
}

export function Machines({ canManage }: { canManage: boolean }) {
  const [machines, setMachines] = useState<FleetMachine[]>([]);
  const [groups, setGroups] = useState<FleetGroup[]>([]);
  const [gateways, setGateways] = useState<Gateway[]>([]);
  const [editing, setEditing] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const load = async () => {
    const [m, g, gw] = await Promise.all([api.get<Page<FleetMachine>>('/machines?limit=1000'), api.get<Page<FleetGroup>>('/machine-groups?limit=1000'), api.get<Page<Gateway>>('/gateways?limit=1000')]);
    setMachines(byName(m.items));
    setGroups(g.items);
    setGateways(gw.items);
  };
  useEffect(() => void load().catch((err: unknown) => setError(message(err))), []);
  const groupNames = (ids: string[]) => byName(groups.filter((g) => ids.includes(g.id))).map((g) => g.name).join(', ') || '—';
  return (
    <main id="main">
      <h1>Machines</h1>
      {error && <p class="error" role="alert">{error}</p>}
      {notice && <p class="notice" role="status">{notice}</p>}
      {machines.length === 0 && <p>No machines yet. They appear here when a gateway is synced (Gateways).</p>}
      <table class="list" aria-label="Machines">
        <thead><tr><th scope="col">Machine</th><th scope="col">Gateway</th><th scope="col">Groups</th><th scope="col">Program directory</th><th scope="col">Mirror</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>{machines.map((m) => (
          <tr key={m.id} data-machine={m.machineId}>
            <td title={`${m.machineId} (${m.id})`}>{m.name}{m.present ? '' : ' (no longer on its gateway)'}</td>
            <td>{gateways.find((g) => g.id === m.gatewayId)?.name ?? m.gatewayId}</td>
            <td>{groupNames(m.groupIds)}</td>
            <td>{m.programDir ? <code>{m.programDir}</code> : <span class="muted">none: set one before deploying</span>}</td>
            <td>{m.mirror.enabled ? `every ${m.mirror.intervalSec} s` : 'off'}</td>
            <td>{canManage && <button type="button" onClick={() => setEditing(editing === m.id ? null : m.id)}>Edit</button>}</td>
          </tr>
        ))}</tbody>
      </table>
      {editing && machines.find((m) => m.id === editing) && (
        <section class="card" aria-label="Edit a machine">
          <MachineEditor key={editing} machine={machines.find((m) => m.id === editing) as FleetMachine} onError={setError}
            onSaved={(text) => { setNotice(text); setEditing(null); void load(); }} />
        </section>
      )}
      <Groups groups={groups} machines={machines.filter((m) => m.present)} canManage={canManage} onError={setError} onChanged={async (text) => { setNotice(text); await load(); }} />
    </main>
  );
}

function RegisterGateway({ onDone, onError }: { onDone: (text: string) => Promise<void>; onError: (text: string | null) => void }) {
  const empty = { name: '', url: '', secretKey: '' };
  const [form, setForm] = useState(empty);
  const submit = async (e: Event) => {
    e.preventDefault();
    onError(null);
    try {
      const g = await api.post<Gateway>('/gateways', form);
      setForm(empty);
      if (!g.reachable) return await onDone(`Gateway ${g.name} registered, but it did not answer: ${g.lastError ?? 'no answer'}. Sync it once it answers.`);
      // Its machines are read at once, so they can be assigned programs right away.
      const synced = await api.post<SyncReport>(`/gateways/${g.id}/sync`).then((r) => syncWords(r.machines), (err: unknown) => `but its machines could not be read: ${message(err)}`);
      await onDone(`Gateway ${g.name} registered and synced: ${synced}.`);
    } catch (err) {
      onError(message(err));
    }
  };
  return (
    <form class="inline-form" aria-label="Register a gateway" onSubmit={submit}>
      <label>Name <input required value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} /></label>
      <label>Address <input required value={form.url} placeholder="http://10.0.4.7:8080" onInput={(e) => setForm({ ...form, url: e.currentTarget.value })} /></label>
      <label>Secret key <input required type="password" autoComplete="off" value={form.secretKey} placeholder="made in that gateway's console" onInput={(e) => setForm({ ...form, secretKey: e.currentTarget.value })} /></label>
      <button type="submit">Register the gateway</button>
    </form>
  );
}

export function Gateways({ canManage }: { canManage: boolean }) {
  const [gateways, setGateways] = useState<Gateway[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const load = async () => setGateways(byName((await api.get<Page<Gateway>>('/gateways?limit=1000')).items));
  useEffect(() => void load().catch((err: unknown) => setError(message(err))), []);
  const sync = async (g: Gateway) => {
    setError(null);
    try {
      const r = await api.post<SyncReport>(`/gateways/${g.id}/sync`);
      setNotice(`${g.name} synced: ${syncWords(r.machines)}.`);
    } catch (err) {
      setError(`${g.name} could not be synced: ${message(err)}`);
    }
    await load().catch(() => undefined);
  };
  return (
    <main id="main">
      <h1>Gateways</h1>
      <p class="muted">The gateway of each instance is read again by its instance whenever its machines change; remote gateways on an interval, or now with <i>Sync now</i>.</p>
      {error && <p class="error" role="alert">{error}</p>}
      {notice && <p class="notice" role="status">{notice}</p>}
      {gateways.length === 0 && <p>No gateways yet. Register one below with its address and a secret key made in its console.</p>}
      <table class="list" aria-label="Gateways">
        <thead><tr><th scope="col">Gateway</th><th scope="col">Address</th><th scope="col">Reachable</th><th scope="col">Last sync</th><th scope="col">Last error</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>{gateways.map((g) => (
          <tr key={g.id} data-gateway={g.name} data-reachable={String(g.reachable)}>
            <td title={g.id}>{g.name}</td>
            <td>{g.kind === 'in-process' ? `in the process of the instance on ${g.host ?? 'its host'}${g.url === 'in-process' ? '' : `; others reach it at ${g.url}`}` : g.url}</td>
            <td>{g.reachable ? 'yes' : <b class="error">no</b>}</td>
            <td>{when(g.lastSyncAt)}</td>
            <td class="wrap">{g.lastError ? `${g.lastError} (${when(g.lastErrorAt)})` : '—'}</td>
            <td>{canManage && <button type="button" onClick={() => void sync(g)}>Sync now</button>}</td>
          </tr>
        ))}</tbody>
      </table>
      {canManage && <RegisterGateway onError={setError} onDone={async (text) => { setNotice(text); await load(); }} />}
      {canManage && <KeyHelp />}
    </main>
  );
}
