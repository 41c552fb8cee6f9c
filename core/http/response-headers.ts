/**
 * The security headers every answer of every role carries, set in one
 * `onSend` hook the runtime installs on the role's app before any route
 * (docs/security.md, "Response headers"):
 *
 * - `X-Content-Type-Options: nosniff` on every answer, so a browser never
 *   reads an API answer (a program's text, a CSV export) as a script or a
 *   page of another type than the one declared;
 * - `Cache-Control: no-store` on every answer that sets no cache policy of
 *   its own: API answers (signed in or not, errors included) hold plant data
 *   or session state that no browser or proxy should keep. The consoles'
 *   pages and assets and the API reference's static files set their own;
 * - on an HTML page that sets no Content-Security-Policy of its own (the
 *   API reference at /api/docs, Swagger UI), the reference's policy: its
 *   scripts, styles and requests from this origin only, never in a frame;
 *   with `X-Frame-Options: DENY` and `Referrer-Policy: no-referrer` on every
 *   HTML page, as the consoles have.
 */
import type { FastifyInstance } from 'fastify';

/**
 * The API reference's page policy: Swagger UI loads its bundle, styles and
 * the document from this origin; no inline script, no frame, no other
 * origin. Inline styles are allowed: Swagger UI sets style attributes as it
 * renders (blocked, the browser reports each), and a style cannot run code.
 */
export const DOCS_CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; font-src 'self' data:; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/** Adds the hook to `app`; call before any route or plugin is registered, so every answer passes it. */
export function installResponseHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('x-content-type-options', 'nosniff');
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith('text/html')) {
      if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', DOCS_CSP);
      reply.header('x-frame-options', 'DENY');
      if (!reply.hasHeader('referrer-policy')) reply.header('referrer-policy', 'no-referrer');
    }
    return payload;
  });
}
