/** The program service's login dialog (session cookie), shared by the console and the terminal, with the sign-in through the plant's provider when the service offers one. */
import { useState } from 'preact/hooks';
import { login, ProblemError, type Me } from './api.js';
import { SsoSignIn } from '../shared/sso.js';

const message = (err: unknown) => (err instanceof ProblemError ? err.message : 'The service could not be reached.');

export function LoginDialog({ title, onDone }: { title: string; onDone: (me: Me) => void }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      onDone(await login(username, password));
      setPassword('');
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <div class="overlay" role="presentation">
      <form class="dialog" role="dialog" aria-modal="true" aria-labelledby="login-title" onSubmit={submit}>
        <h1 id="login-title">{title}</h1>
        <label for="login-user">User name</label>
        <input id="login-user" autoComplete="username" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} autoFocus />
        <label for="login-password">Password</label>
        <input id="login-password" type="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        {error && <p class="error" role="alert">{error}</p>}
        <button type="submit">Log in</button>
        <SsoSignIn returnTo={location.pathname} />
      </form>
    </div>
  );
}

