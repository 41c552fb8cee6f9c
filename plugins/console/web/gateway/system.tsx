/**
 * The gateway's system page (`#/system`): its secret keys (what a program service or
 * another client uses instead of a password), listed without their secrets;
 * an administrator makes one for a user (shown once, then only its hash is
 * kept) and revokes one, which stops working at once. A user who is not an
 * administrator is told who can, and offered nothing they cannot use. Then
 * the northbound targets the gateway publishes its history to.
 */
import { useEffect, useState } from 'preact/hooks';
import type { EntryOutput } from '../../../../core/interfaces/registry.js';
import type { SECURITY } from '../../../../core/roles/gateway/contract/security.js';
import { api, ApiError, onAuthRequired } from '../shared/api.js';
import { NorthboundTargets } from './northbound.js';

type SecretKey = EntryOutput<typeof SECURITY.secretKeys>[number];
type User = EntryOutput<typeof SECURITY.users>[number];
type MadeKey = EntryOutput<typeof SECURITY.createSecretKey>;

const when = (ms: number | null) => (ms === null ? 'never' : new Date(ms).toLocaleString());

/** What a failed call says: a refusal to a user who is not an administrator in plant words, else the gateway's message. */
const words = (err: unknown) => (err instanceof ApiError ? (err.status === 403 ? 'Only an administrator of this gateway can see and make secret keys.' : err.message) : 'The gateway could not be reached.');

function MakeKey({ users, onMade, onError }: { users: User[]; onMade: (made: MadeKey) => Promise<void>; onError: (text: string | null) => void }) {
  const [username, setUsername] = useState('');
  const [label, setLabel] = useState('');
  const chosen = username || users[0]?.username || '';
  const submit = async (e: Event) => {
    e.preventDefault();
    onError(null);
    try {
      const made = await api.write<typeof SECURITY.createSecretKey>('/api/security/secret-key/create', { username: chosen, label });
      setLabel('');
      await onMade(made);
    } catch (err) {
      onError(words(err));
    }
  };
  return (
    <form class="card key-form" aria-label="Make a secret key" onSubmit={submit}>
      <h2>Make a secret key</h2>
      <label for="key-user">For the user</label>
      <select id="key-user" value={chosen} onChange={(e) => setUsername(e.currentTarget.value)}>
        {users.map((u) => <option key={u.username} value={u.username}>{u.username}{u.isAdmin ? ' (administrator)' : ''}</option>)}
      </select>
      <label for="key-label">What it is for</label>
      <input id="key-label" value={label} maxLength={128} placeholder="e.g. program service" onInput={(e) => setLabel(e.currentTarget.value)} />
      <button type="submit" class="primary" disabled={!chosen}>Make a key</button>
    </form>
  );
}

export function SystemPage() {
  const [keys, setKeys] = useState<SecretKey[] | null>(null);
  const [users, setUsers] = useState<User[]>([]);
  const [refused, setRefused] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [shown, setShown] = useState<MadeKey | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const load = async () => {
    const [k, u] = await Promise.all([api.read<typeof SECURITY.secretKeys>('/api/security/secret-keys'), api.read<typeof SECURITY.users>('/api/security/users')]);
    setKeys(k);
    setUsers(u);
  };
  // Read at first, and again after each login: whoever logged in now sees what their role may see. A key being shown stays
  // through a login after an expired session; a log-out makes the page anew (main.tsx), so the next user never sees it.
  useEffect(() => {
    const fresh = () => {
      setKeys(null);
      setRefused(null);
      setNotice(null);
      void load().catch((err: unknown) => setRefused(words(err)));
    };
    fresh();
    return onAuthRequired((needed) => {
      if (!needed) fresh();
    });
  }, []);
  const revoke = async (k: SecretKey) => {
    setError(null);
    try {
      await api.write<typeof SECURITY.revokeSecretKey>('/api/security/secret-key/revoke', { id: k.id });
      setNotice(`The key ${k.label || k.id} of ${k.username} is revoked: it no longer works.`);
      await load();
    } catch (err) {
      setError(words(err));
    }
  };
  return (
    <main id="main">
      <div class="page-head"><h1>System</h1></div>
      {refused && <p class="error" role="alert">{refused}</p>}
      {error && <p class="error" role="alert">{error}</p>}
      {notice && <p class="notice" role="status">{notice}</p>}
      {shown && (
        <div class="card secret" role="status">
          <p><b>Secret key for {shown.username}{shown.label ? ` (${shown.label})` : ''}</b>: shown this once; the gateway keeps only its hash. Copy it now:</p>
          <p><code data-secret>{shown.key}</code></p>
          <button type="button" onClick={() => setShown(null)}>I have copied it</button>
        </div>
      )}
      {keys && (
        <section class="card" aria-labelledby="keys-title">
          <h2 id="keys-title">Secret keys</h2>
          <p class="muted">A key acts as its user: give a program service a key of a user allowed the interfaces it calls (an administrator is allowed every one).</p>
          {keys.length === 0 ? <p>No secret keys yet.</p> : (
            <table class="keys" aria-label="Secret keys">
              <thead><tr><th scope="col">User</th><th scope="col">For</th><th scope="col">Made</th><th scope="col">Last used</th><th scope="col">State</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
              <tbody>{keys.map((k) => (
                <tr key={k.id} data-key={k.id} data-revoked={String(k.revokedAt !== null)}>
                  <td>{k.username}</td><td>{k.label || '—'}</td><td>{when(k.createdAt)}</td><td>{when(k.lastUsedAt)}</td><td>{k.revokedAt === null ? 'valid' : `revoked ${when(k.revokedAt)}`}</td>
                  <td>{k.revokedAt === null && <button type="button" onClick={() => void revoke(k)} aria-label={`Revoke the key ${k.label || k.id} of ${k.username}`}>Revoke</button>}</td>
                </tr>
              ))}</tbody>
            </table>
          )}
        </section>
      )}
      {keys && <MakeKey users={users} onError={setError} onMade={async (made) => { setShown(made); setNotice(null); await load(); }} />}
      <NorthboundTargets />
    </main>
  );
}
