/**
 * The few pages a sign-in through the provider answers itself, outside the
 * consoles' scripts: the step that takes the browser on to the console, and
 * the refusals (no role mapped, the provider cannot be reached, a sign-in
 * that was not started here). Plain HTML without script, under a policy that
 * allows nothing but their own style sheet; everything quoted is escaped and
 * bounded by the caller.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';

const STYLE = 'body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#1b1f24}h1{font-size:1.4rem}code{background:#eef1f5;padding:0 .25rem;border-radius:3px}li{margin:.2rem 0}a{color:#1f5fbf}';
const CSP = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`;

/** HTML-escapes text. */
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A page: its status, title and body (HTML the caller built from escaped parts). */
export interface OidcPage {
  status: number;
  title: string;
  body: string;
  /** A path to go on to at once (meta refresh); the body holds a link for a browser that does not. */
  refreshTo?: string;
}

/** Sends a page with the headers every one of them carries (never cached, no referrer, no framing). */
export function sendPage(reply: FastifyReply, page: OidcPage): FastifyReply {
  const refresh = page.refreshTo ? `<meta http-equiv="refresh" content="0;url=${escapeHtml(page.refreshTo)}">\n` : '';
  const html = `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n${refresh}<title>${escapeHtml(page.title)}</title>\n<style>${STYLE}</style>\n</head>\n<body>\n<main>\n<h1>${escapeHtml(page.title)}</h1>\n${page.body}\n</main>\n</body>\n</html>\n`;
  return reply
    .code(page.status)
    .header('cache-control', 'no-store')
    .header('content-security-policy', CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .type('text/html; charset=utf-8')
    .send(html);
}

/** The step after a sign-in: on to the console (a navigation of this site's own, so the console's SameSite=Strict cookie goes with it). */
export function continuePage(path: string): OidcPage {
  return { status: 200, title: 'Signed in', refreshTo: path, body: `<p>Signed in. <a href="${escapeHtml(path)}">Continue to the console</a>.</p>` };
}

/** A refusal with a sentence and a way back to the console's login. */
export function refusalPage(status: number, title: string, message: string, back: string): OidcPage {
  return { status, title, body: `<p>${escapeHtml(message)}</p>\n<p><a href="${escapeHtml(back)}">Back to the console</a> (the local sign-in works as before).</p>` };
}

/** What a sign-in that maps to no role was seen with. */
export interface UnmappedSignIn {
  displayName: string;
  username: string;
  /** Each claim the mapping reads, with the values the provider sent (quoted, at most 50 each). */
  seen: { claim: string; values: string[]; more: number }[];
  /** The settings an administrator edits, e.g. `programs.oidc.roles`. */
  settingPath: string;
  back: string;
}

/** "No access": which claim values were seen, and that an administrator must map one. */
export function unmappedPage(u: UnmappedSignIn): OidcPage {
  const claims = u.seen.map(({ claim, values, more }) => {
    const listed = values.length ? values.map((v) => `<code>${escapeHtml(v)}</code>`).join(', ') : '<em>none</em>';
    return `<li><code>${escapeHtml(claim)}</code>: ${listed}${more ? ` and ${more} more` : ''}</li>`;
  });
  return {
    status: 403,
    title: 'No access yet',
    body: [
      `<p>You signed in with ${escapeHtml(u.displayName)} as <b>${escapeHtml(u.username)}</b>, but none of the values the provider sent is mapped to a role of this console, so you have no access.</p>`,
      `<p>The values seen:</p>\n<ul>${claims.join('\n')}</ul>`,
      `<p>An administrator must map one of them to a role in <code>${escapeHtml(u.settingPath)}</code> (docs/identity.md), or give you a value that is mapped; then sign in again.</p>`,
      `<p><a href="${escapeHtml(u.back)}">Back to the console</a></p>`,
    ].join('\n'),
  };
}
