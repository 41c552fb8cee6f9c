/**
 * The program service's REST API (`/api/v1`) from the browser: the session
 * cookie (HttpOnly, set by POST /auth/login) and its CSRF token, which every
 * request that changes something sends as X-CSRF-Token (read again from
 * GET /auth/me after a reload). Errors are problem documents (RFC 9457):
 * their detail and field sentences, in plant words, are what the page shows. A 401 brings
 * the login back; the call waits for it and is sent again. An approval that
 * needs a fresh sign-in at the provider sends the browser there.
 */
import { createLoginGate } from '../shared/login-gate.js';

export interface Problem {
  status: number;
  title: string;
  detail?: string;
  type?: string;
  errors?: { field: string; message: string; accepted?: string }[];
}

/** A problem in words a person reads: its detail, and each field's sentence the detail does not already say. */
export function problemWords(problem: Problem): string {
  const detail = problem.detail ?? problem.title;
  const said = detail.toLowerCase();
  const more = (problem.errors ?? []).map((e) => e.message).filter((m) => m && !said.includes(m.toLowerCase().replace(/[.!?]$/, '')));
  return [detail, ...more.map((m) => (/[.!?]$/.test(m) ? m : `${m}.`))].join(' ');
}

export class ProblemError extends Error {
  constructor(readonly problem: Problem) {
    super(problemWords(problem));
  }
}

export interface Me {
  name: string;
  role: string;
  permissions: string[];
  csrfToken?: string;
  /** A session of a sign-in through the identity provider; its logout goes on to the provider. */
  identityProvider?: { authTime: string | null };
}

let csrf: string | null = null;
/** Whether the session came from a sign-in through the provider (read from GET /auth/me). */
let throughProvider = false;
/** The person at a shared terminal: sent as X-On-Behalf-Of, so the audit names them. */
let operator: string | null = null;

export function setOperator(name: string | null): void {
  operator = name && name.trim() ? name.trim() : null;
}
const gate = createLoginGate();

export const onLoginNeeded = gate.listen;

async function send<T>(method: string, path: string, body: unknown, retried: boolean, headers: Record<string, string> = {}): Promise<T> {
  const response = await fetch(`/api/v1${path}`, {
    method,
    credentials: 'same-origin',
    headers: { accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(method !== 'GET' && csrf ? { 'x-csrf-token': csrf } : {}), ...(operator ? { 'x-on-behalf-of': operator } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (response.status === 401) {
    // An approval by a person signed in through the provider long ago: the provider asks them to sign in again, then the page comes back.
    const problem = (await response.clone().json().catch(() => null)) as { type?: string; signInUrl?: string } | null;
    if (problem?.type?.endsWith('/reauthentication-required') && problem.signInUrl?.startsWith('/auth/oidc/')) {
      location.assign(problem.signInUrl);
      return new Promise<T>(() => undefined);
    }
  }
  if (response.status === 401 && !path.startsWith('/auth/login') && !retried) {
    await gate.wait();
    return send<T>(method, path, body, true, headers);
  }
  const text = await response.text();
  const json = text ? (JSON.parse(text) as unknown) : undefined;
  if (!response.ok) throw new ProblemError((json as Problem | undefined) ?? { status: response.status, title: `HTTP ${response.status}` });
  return json as T;
}

export const api = {
  get: <T>(path: string) => send<T>('GET', path, undefined, false),
  post: <T>(path: string, body?: unknown, headers?: Record<string, string>) => send<T>('POST', path, body ?? {}, false, headers),
  patch: <T>(path: string, body: unknown) => send<T>('PATCH', path, body, false),
  delete: <T>(path: string) => send<T>('DELETE', path, undefined, false),
};

export async function login(username: string, password: string): Promise<Me> {
  const answer = await send<{ user: { username: string; role: string }; csrfToken: string }>('POST', '/auth/login', { username, password }, true);
  csrf = answer.csrfToken;
  const me = (await whoAmI()) ?? { name: answer.user.username, role: answer.user.role, permissions: [] };
  gate.open();
  return me;
}

/** Who is logged in (and the CSRF token) after a reload; null without a session. */
export async function whoAmI(): Promise<Me | null> {
  try {
    const me = await send<Me>('GET', '/auth/me', undefined, true);
    csrf = me.csrfToken ?? null;
    throughProvider = me.identityProvider !== undefined;
    return me;
  } catch {
    return null;
  }
}

/** Ends the session; one of a sign-in through the provider then ends at the provider too, which brings the browser back to this page. */
export async function logout(): Promise<void> {
  await send('POST', '/auth/logout', {}, true).catch(() => undefined);
  csrf = null;
  if (throughProvider) {
    throughProvider = false;
    location.assign(`/auth/oidc/logout?returnTo=${encodeURIComponent(location.pathname)}`);
    return;
  }
  gate.announce(true);
}
