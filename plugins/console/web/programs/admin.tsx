/**
 * Administration: users with their role and scopes, service tokens and
 * webhooks (each secret shown once, when made) with the webhooks'
 * deliveries. Only the parts the caller's role may use are shown and read.
 */
import { useState } from 'preact/hooks';
import { api, type Me } from './api.js';
import { message, useLoad, when, type Page } from './model.js';

interface User { id: string; username: string; role: string; scopes: { libraries: string | string[]; machineGroups: string | string[] }; disabled: boolean }
interface Token { id: string; name: string; role: string; revokedAt: string | null; lastUsedAt: string | null; expiresAt: string | null }
interface Webhook { id: string; url: string; events: string[]; enabled: boolean; disabledReason: string | null }
interface Delivery { id: string; webhookId: string; event: string; status: string; attempts: number; lastStatusCode: number | null; lastError: string | null; createdAt: string }

const ROLES = ['admin', 'programmer', 'approver', 'operator', 'auditor', 'integration'];
const EVENTS = ['deployment.completed', 'deployment.failed', 'version.published', 'trial.started', 'trial.promoted', 'trial.pulled-back', 'drift.opened'];
interface Named { id: string; name: string }
type Scope = '*' | string[];
const scopeNames = (s: string | string[], named: Named[]) => (Array.isArray(s) ? s.map((id) => named.find((n) => n.id === id)?.name ?? id).join(', ') || 'none' : s === '*' ? 'all' : s);

/** A scope picker: all, or the chosen ones of `options`. */
function ScopePicker({ label, value, options, onChange }: { label: string; value: Scope; options: Named[]; onChange: (v: Scope) => void }) {
  const all = value === '*';
  return (
    <fieldset class="plain scope">
      <legend>{label}</legend>
      <label class="check"><input type="checkbox" checked={all} onChange={(e) => onChange(e.currentTarget.checked ? '*' : [])} /> all</label>
      {!all && options.map((o) => (
        <label key={o.id} class="check"><input type="checkbox" checked={(value as string[]).includes(o.id)} onChange={(e) => onChange(e.currentTarget.checked ? [...(value as string[]), o.id] : (value as string[]).filter((x) => x !== o.id))} /> {o.name}</label>
      ))}
    </fieldset>
  );
}

function UserEditor({ user, libraries, groups, onSaved, onError }: { user: User; libraries: Named[]; groups: Named[]; onSaved: (text: string) => void; onError: (text: string) => void }) {
  const [role, setRole] = useState(user.role);
  const [libs, setLibs] = useState<Scope>(user.scopes.libraries as Scope);
  const [grps, setGrps] = useState<Scope>(user.scopes.machineGroups as Scope);
  const [disabled, setDisabled] = useState(user.disabled);
  const save = async (e: Event) => {
    e.preventDefault();
    try {
      await api.patch(`/admin/users/${user.id}`, { role, scopes: { libraries: libs, machineGroups: grps }, disabled });
      onSaved(`${user.username}: saved.`);
    } catch (err) {
      onError(message(err));
    }
  };
  return (
    <form class="card user-editor" aria-label={`Edit ${user.username}`} onSubmit={save}>
      <h3>{user.username}</h3>
      <label>Role <select value={role} onChange={(e) => setRole(e.currentTarget.value)}>{ROLES.map((r) => <option key={r}>{r}</option>)}</select></label>
      <ScopePicker label="Libraries" value={libs} options={libraries} onChange={setLibs} />
      <ScopePicker label="Machine groups" value={grps} options={groups} onChange={setGrps} />
      <label class="check"><input type="checkbox" checked={disabled} onChange={(e) => setDisabled(e.currentTarget.checked)} /> disabled (cannot log in; its sessions end)</label>
      <button type="submit">Save {user.username}</button>
    </form>
  );
}

/** A list the caller's role may read, else an empty one without asking (a refused request would be audited). */
const allowed = <T,>(may: boolean, path: string) => (may ? api.get<Page<T>>(path) : Promise.resolve({ items: [] as T[] }));

export function Admin({ me }: { me: Me }) {
  const may = (p: string) => me.permissions.includes(p);
  const [users, usersError, reloadUsers] = useLoad(() => allowed<User>(may('users.manage'), '/admin/users?limit=200'));
  const [tokens, , reloadTokens] = useLoad(() => allowed<Token>(may('tokens.manage'), '/admin/service-tokens?limit=200'));
  const [hooks, , reloadHooks] = useLoad(() => allowed<Webhook>(may('webhooks.manage'), '/admin/webhooks?limit=200'));
  const [deliveries, , reloadDeliveries] = useLoad(() => allowed<Delivery>(may('webhooks.manage'), '/admin/webhooks/deliveries?limit=50'));
  const [secret, setSecret] = useState<{ what: string; value: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [newUser, setNewUser] = useState<{ username: string; password: string; role: string; libraries: Scope; machineGroups: Scope }>({ username: '', password: '', role: 'operator', libraries: '*', machineGroups: '*' });
  const [libraries] = useLoad(() => api.get<Page<Named>>('/libraries?limit=200'));
  const [groups] = useLoad(() => api.get<Page<Named>>('/machine-groups?limit=200'));
  const [editing, setEditing] = useState<User | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [newToken, setNewToken] = useState({ name: '', role: 'integration' });
  const [newHook, setNewHook] = useState({ url: '', events: ['deployment.completed', 'deployment.failed'] });
  const run = async (call: () => Promise<void>) => {
    setError(null);
    try {
      await call();
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <main id="main">
      <h1>Administration</h1>
      {(error ?? usersError) && <p class="error" role="alert">{error ?? usersError}</p>}
      {secret && (
        <div class="card secret" role="status">
          <p><b>{secret.what}</b> — shown this once; only its hash is kept. Copy it now:</p>
          <p><code data-secret>{secret.value}</code></p>
          <button type="button" onClick={() => setSecret(null)}>I have copied it</button>
        </div>
      )}
      {may('users.manage') && <section class="card" aria-labelledby="users-title">
        <h2 id="users-title">Users</h2>
        <table class="list" aria-label="Users"><thead><tr><th scope="col">User</th><th scope="col">Role</th><th scope="col">Libraries</th><th scope="col">Machine groups</th><th scope="col">State</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>{(users?.items ?? []).map((u) => (
            <tr key={u.id} data-user={u.username}><td>{u.username}</td><td>{u.role}</td><td>{scopeNames(u.scopes.libraries, libraries?.items ?? [])}</td><td>{scopeNames(u.scopes.machineGroups, groups?.items ?? [])}</td><td>{u.disabled ? 'disabled' : 'active'}</td>
              <td><button type="button" onClick={() => { setEditing(u); setSaved(null); }}>Edit</button></td></tr>
          ))}</tbody></table>
        {saved && <p class="notice" role="status">{saved}</p>}
        {editing && <UserEditor key={editing.id} user={editing} libraries={libraries?.items ?? []} groups={groups?.items ?? []} onError={setError}
          onSaved={(text) => { setSaved(text); setEditing(null); void reloadUsers(); }} />}
        <form class="inline-form" aria-label="New user" onSubmit={(e) => { e.preventDefault(); void run(async () => { await api.post('/admin/users', { username: newUser.username, password: newUser.password, role: newUser.role, scopes: { libraries: newUser.libraries, machineGroups: newUser.machineGroups } }); setNewUser({ username: '', password: '', role: 'operator', libraries: '*', machineGroups: '*' }); await reloadUsers(); }); }}>
          <label>User name <input value={newUser.username} required onInput={(e) => setNewUser({ ...newUser, username: e.currentTarget.value })} /></label>
          <label>Password <input type="password" autoComplete="new-password" value={newUser.password} required onInput={(e) => setNewUser({ ...newUser, password: e.currentTarget.value })} /></label>
          <label>Role <select value={newUser.role} onChange={(e) => setNewUser({ ...newUser, role: e.currentTarget.value })}>{ROLES.map((r) => <option key={r}>{r}</option>)}</select></label>
          <ScopePicker label="Libraries" value={newUser.libraries} options={libraries?.items ?? []} onChange={(v) => setNewUser({ ...newUser, libraries: v })} />
          <ScopePicker label="Machine groups" value={newUser.machineGroups} options={groups?.items ?? []} onChange={(v) => setNewUser({ ...newUser, machineGroups: v })} />
          <button type="submit">Add user</button>
        </form>
      </section>}
      {may('tokens.manage') && <section class="card" aria-labelledby="tokens-title">
        <h2 id="tokens-title">Service tokens</h2>
        <table class="list" aria-label="Service tokens"><thead><tr><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Last used</th><th scope="col">State</th></tr></thead>
          <tbody>{(tokens?.items ?? []).map((t) => <tr key={t.id}><td>{t.name}</td><td>{t.role}</td><td>{when(t.lastUsedAt)}</td><td>{t.revokedAt ? 'revoked' : 'valid'}</td></tr>)}</tbody></table>
        <form class="inline-form" aria-label="New service token" onSubmit={(e) => { e.preventDefault(); void run(async () => { const made = await api.post<{ token: string }>('/admin/service-tokens', newToken); setSecret({ what: `Service token ${newToken.name}`, value: made.token }); setNewToken({ name: '', role: 'integration' }); await reloadTokens(); }); }}>
          <label>Name <input value={newToken.name} required onInput={(e) => setNewToken({ ...newToken, name: e.currentTarget.value })} /></label>
          <label>Role <select value={newToken.role} onChange={(e) => setNewToken({ ...newToken, role: e.currentTarget.value })}>{ROLES.map((r) => <option key={r}>{r}</option>)}</select></label>
          <button type="submit">Make a token</button>
        </form>
      </section>}
      {may('webhooks.manage') && <section class="card" aria-labelledby="hooks-title">
        <h2 id="hooks-title">Webhooks</h2>
        <table class="list" aria-label="Webhooks"><thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">State</th></tr></thead>
          <tbody>{(hooks?.items ?? []).map((h) => <tr key={h.id}><td>{h.url}</td><td>{h.events.join(', ')}</td><td>{h.enabled ? 'enabled' : `disabled: ${h.disabledReason ?? ''}`}</td></tr>)}</tbody></table>
        <form class="inline-form" aria-label="New webhook" onSubmit={(e) => { e.preventDefault(); void run(async () => { const made = await api.post<{ secret: string }>('/admin/webhooks', newHook); setSecret({ what: `Signing secret of ${newHook.url}`, value: made.secret }); setNewHook({ ...newHook, url: '' }); await reloadHooks(); await reloadDeliveries(); }); }}>
          <label>URL <input value={newHook.url} required placeholder="https://mes.example/hooks" onInput={(e) => setNewHook({ ...newHook, url: e.currentTarget.value })} /></label>
          <fieldset class="plain events"><legend>Events</legend>{EVENTS.map((ev) => (
            <label key={ev} class="check"><input type="checkbox" checked={newHook.events.includes(ev)} onChange={(e) => setNewHook({ ...newHook, events: e.currentTarget.checked ? [...newHook.events, ev] : newHook.events.filter((x) => x !== ev) })} /> {ev}</label>
          ))}</fieldset>
          <button type="submit">Add webhook</button>
        </form>
        <h3>Latest deliveries</h3>
        <table class="list" aria-label="Webhook deliveries"><thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col">Queued</th></tr></thead>
          <tbody>{(deliveries?.items ?? []).map((d) => <tr key={d.id}><td>{d.event}</td><td>{d.status}</td><td>{d.attempts}</td><td>{d.lastStatusCode ?? d.lastError ?? ''}</td><td>{when(d.createdAt)}</td></tr>)}</tbody></table>
      </section>}
    </main>
  );
}
