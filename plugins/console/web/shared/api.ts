/**
 * The gateway's HTTP API from the browser: `/api/...` with the JWT (or secret
 * key) as a Bearer token, answers `{errorCode, errorMsg, data}`. A 401 asks
 * the page to log in again (onAuthRequired) and the call waits for it, so
 * nothing typed or shown is lost; then it is sent again.
 */
import type { EntryInput, EntryOutput, InterfaceEntry } from '../../../../core/interfaces/registry.js';
import { createLoginGate } from './login-gate.js';

const TOKEN_KEY = 'gateway-console-token';

export class ApiError extends Error {
  constructor(readonly status: number, readonly errorCode: number, message: string) {
    super(message);
  }
}

let token: string | null = sessionStorage.getItem(TOKEN_KEY);
const gate = createLoginGate();

/** Called with true when a login is needed, and false once there is a token again. */
export const onAuthRequired = gate.listen;

export function hasToken(): boolean {
  return token !== null;
}

export function currentToken(): string | null {
  return token;
}

/** After a 401 met elsewhere (a worker's call): the login is shown, and this resolves with the new token. */
export async function reauthenticate(): Promise<string | null> {
  setToken(null);
  await gate.wait();
  return token;
}

export function setToken(next: string | null): void {
  token = next;
  if (next === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, next);
  if (next !== null) gate.open();
  else gate.announce(true);
}

/** The session id (`sid`) a JWT of a sign-in through the provider carries; null for any other credential. */
function sessionOf(jwt: string | null): string | null {
  try {
    const payload = JSON.parse(atob((jwt?.split('.')[1] ?? '').replace(/-/g, '+').replace(/_/g, '/'))) as { sid?: unknown };
    return typeof payload.sid === 'string' ? payload.sid : null;
  } catch {
    return null;
  }
}

/**
 * The end of a sign-in through the provider: the browser came back to
 * `/#sso=<code>`, and the one-time code is traded for the JWT. Answers
 * whether there was one.
 */
export async function finishProviderSignIn(): Promise<boolean> {
  const code = /^#sso=([\w-]{1,128})$/.exec(location.hash)?.[1];
  if (!code) return false;
  history.replaceState(null, '', location.pathname);
  const response = await fetch('/auth/oidc/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }) });
  if (!response.ok) return false;
  const { token: jwt } = (await response.json()) as { token: string };
  token = jwt;
  sessionStorage.setItem(TOKEN_KEY, jwt);
  return true;
}

/** Logs out: a session of the provider's sign-in ends at the gateway and then at the provider; any other credential is dropped. */
export async function logOut(): Promise<void> {
  const jwt = token;
  if (sessionOf(jwt) === null) {
    setToken(null);
    return;
  }
  await fetch('/auth/logout', { method: 'POST', headers: { authorization: `Bearer ${jwt}` } }).catch(() => undefined);
  token = null;
  sessionStorage.removeItem(TOKEN_KEY);
  location.assign('/auth/oidc/logout?returnTo=%2F');
}

type Query = Record<string, string | number | boolean | undefined>;

async function send<T>(method: 'GET' | 'POST', path: string, query: Query | undefined, body: unknown, retried: boolean): Promise<T> {
  const qs = query ? Object.entries(query).filter(([, v]) => v !== undefined).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join('&') : '';
  const response = await fetch(qs ? `${path}?${qs}` : path, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  let json: { errorCode?: number; errorMsg?: string; data?: unknown; token?: string };
  try {
    json = (await response.json()) as typeof json;
  } catch {
    throw new ApiError(response.status, -1, `${path}: HTTP ${response.status}, not JSON`);
  }
  if (response.status === 401 && path !== '/api/auth/login' && !retried) {
    setToken(null);
    await gate.wait();
    return send<T>(method, path, query, body, true);
  }
  if (json.errorCode !== 0) throw new ApiError(response.status, json.errorCode ?? -1, json.errorMsg ?? `HTTP ${response.status}`);
  return json.data as T;
}

export const api = {
  get: <T>(path: string, query?: Query) => send<T>('GET', path, query, undefined, false),
  post: <T>(path: string, body: unknown) => send<T>('POST', path, undefined, body, false),
  /**
   * Reads a gateway interface typed by its entry in the gateway's contract
   * (core/roles/gateway/contract/, imported as types only, so no server code
   * reaches the bundle): the path must be the entry's, the query its input,
   * and the answer has its output type.
   */
  read: <E extends InterfaceEntry>(path: E['path'], query?: EntryInput<E> & Query) => send<EntryOutput<E>>('GET', path, query, undefined, false),
  /** Sends a POST to a gateway interface typed by its entry, as `read` does: the body is its input, the answer has its output type. */
  write: <E extends InterfaceEntry>(path: E['path'], body: EntryInput<E>) => send<EntryOutput<E>>('POST', path, undefined, body, false),
};
