/**
 * The login dialog: the gateway's own login (username and password → a JWT),
 * or a secret key, and the sign-in through the plant's provider when the
 * gateway offers one. Shown over the page when a call meets a 401, so what the
 * page holds (a filter, a form being typed) stays as it was.
 */
import { useState } from 'preact/hooks';
import { api, ApiError, setToken } from './api.js';
import { SsoSignIn } from './sso.js';

export function LoginDialog({ product }: { product: string }) {
  const [mode, setMode] = useState<'password' | 'key'>('password');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (mode === 'key') {
        setToken(key.trim());
      } else {
        const answer = await api.post<{ token: string }>('/api/auth/login', { username, password });
        setPassword('');
        setToken(answer.token);
      }
    } catch (err) {
      setError(err instanceof ApiError ? err.message : 'The gateway could not be reached.');
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="overlay" role="presentation">
      <form class="dialog" role="dialog" aria-modal="true" aria-labelledby="login-title" onSubmit={submit}>
        <h1 id="login-title">{product}: log in</h1>
        <fieldset class="choice">
          <legend>Credentials</legend>
          <label><input type="radio" name="mode" checked={mode === 'password'} onChange={() => setMode('password')} /> User and password</label>
          <label><input type="radio" name="mode" checked={mode === 'key'} onChange={() => setMode('key')} /> Secret key</label>
        </fieldset>
        {mode === 'password' ? (
          <>
            <label for="login-user">User name</label>
            <input id="login-user" name="username" autoComplete="username" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} autoFocus />
            <label for="login-password">Password</label>
            <input id="login-password" name="password" type="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
          </>
        ) : (
          <>
            <label for="login-key">Secret key</label>
            <input id="login-key" name="key" type="password" autoComplete="off" required value={key} onInput={(e) => setKey(e.currentTarget.value)} autoFocus />
          </>
        )}
        {error && <p class="error" role="alert">{error}</p>}
        <button type="submit" disabled={busy}>{busy ? 'Logging in…' : 'Log in'}</button>
        <SsoSignIn returnTo="/" />
      </form>
    </div>
  );
}
