/**
 * Session primitives (shared by every role that signs people in): session
 * cookies and their CSRF token. The cookie carries `<id>.<secret>`;
 * the database keeps the id and the SHA-256 of the secret. The CSRF token is
 * derived from the secret (so only a holder of the cookie can know it, and
 * nothing more is stored) and must come back in `X-CSRF-Token` with every
 * unsafe request that authenticates by cookie; docs/programs-access.md. The
 * lifetimes are the program service's (documented there); a role with other
 * needs passes its own.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A session ends after this long without a request. */
export const SESSION_IDLE_MS = 8 * 60 * 60_000;
/** And at the latest this long after login, however active. */
export const SESSION_ABSOLUTE_MS = 7 * 24 * 60 * 60_000;
/** Last-seen times are written at most this often per session. */
export const SESSION_TOUCH_MS = 60_000;

export const COOKIE_NAME = 'pvs_session';
/** Over TLS the cookie takes the `__Host-` prefix: Secure, Path=/, no Domain, so no sibling host can set it. */
export const SECURE_COOKIE_NAME = `__Host-${COOKIE_NAME}`;
export const CSRF_HEADER = 'x-csrf-token';

export interface NewSession {
  id: string;
  cookieValue: string;
  secretHash: string;
  csrfToken: string;
}

const sha256 = (text: string): Buffer => createHash('sha256').update(text).digest();

export function newSession(): NewSession {
  const id = `ses_${randomBytes(8).toString('hex')}`;
  const secret = randomBytes(32).toString('base64url');
  return { id, cookieValue: `${id}.${secret}`, secretHash: sha256(secret).toString('base64'), csrfToken: csrfTokenFor(secret) };
}

export function csrfTokenFor(secret: string): string {
  return sha256(`csrf\u0000${secret}`).toString('base64url');
}

/** `{ id, secret }` from a cookie value, or null when it is not of our form. */
export function parseCookieValue(value: string): { id: string; secret: string } | null {
  const match = /^(ses_[0-9a-f]{16})\.([A-Za-z0-9_-]{43})$/.exec(value);
  return match ? { id: match[1] as string, secret: match[2] as string } : null;
}

export function secretHashMatches(secret: string, stored: string): boolean {
  const a = sha256(secret);
  const b = Buffer.from(stored, 'base64');
  return a.length === b.length && timingSafeEqual(a, b);
}

export function tokensEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The value of cookie `name` in a Cookie header, or undefined. */
export function readCookie(header: string | string[] | undefined, name: string): string | undefined {
  const text = Array.isArray(header) ? header.join('; ') : header;
  if (!text || text.length > 8192) return undefined;
  for (const part of text.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function cookieName(secure: boolean): string {
  return secure ? SECURE_COOKIE_NAME : COOKIE_NAME;
}

/** The Set-Cookie header of a new session, or (value null) of its removal. */
export function setCookieHeader(secure: boolean, value: string | null): string {
  const attributes = ['Path=/', 'HttpOnly', 'SameSite=Strict', ...(secure ? ['Secure'] : [])];
  const lifetime = value === null ? 'Max-Age=0' : `Max-Age=${Math.floor(SESSION_ABSOLUTE_MS / 1000)}`;
  return [`${cookieName(secure)}=${value ?? ''}`, lifetime, ...attributes].join('; ');
}
