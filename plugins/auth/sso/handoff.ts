/**
 * How the fleet console receives the JWT of a sign-in through the provider.
 * The console keeps its JWT in the tab (sessionStorage) and sends it as a
 * Bearer token, so the end of the sign-in cannot simply set a cookie: it
 * takes the browser to `/#sso=<code>`, and the console trades that one-time
 * code for the JWT (`POST /auth/oidc/token`). The code lives a minute, is
 * good once, and travels in the fragment, which no server or log sees.
 */
import { randomBytes } from 'node:crypto';

const TTL_MS = 60_000;
/** At most this many codes wait at once; past it the oldest go. */
const MAX_CODES = 1000;

export class JwtHandoff {
  private readonly codes = new Map<string, { token: string; expiresAt: number }>();

  constructor(private readonly now: () => number) {}

  /** A code for `token`, good once within a minute. */
  offer(token: string): string {
    const now = this.now();
    for (const [code, entry] of this.codes) if (entry.expiresAt <= now || this.codes.size >= MAX_CODES) this.codes.delete(code);
    const code = randomBytes(32).toString('base64url');
    this.codes.set(code, { token, expiresAt: now + TTL_MS });
    return code;
  }

  /** The token of `code`, once; undefined for an unknown, used or expired code. */
  take(code: string): string | undefined {
    const entry = this.codes.get(code);
    this.codes.delete(code);
    return entry && entry.expiresAt > this.now() ? entry.token : undefined;
  }
}
