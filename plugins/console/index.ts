/**
 * Serves a web console built by ./build.ts: its page at `/` and its assets
 * under `/assets/`, from memory. Assets have content-hashed names, so they
 * are cached for a year; the page is never cached, so a new build is seen
 * at once. A gzip copy is sent to browsers that take it. Only the built
 * files are served (no path from the request reaches the file system), and
 * the page carries a Content-Security-Policy that allows this origin alone.
 *
 * The build runs at most once per process, at the first request, and only
 * when the sources changed since the last (`npm start` and `npm ci` build
 * beforehand).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { definePlugin } from '../../core/runtime/plugin-host.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { ensureBuilt, type ConsoleName } from './build.js';

interface Loaded {
  pages: Map<string, Buffer>;
  assets: Map<string, { body: Buffer; gzip: Buffer; contentType: string }>;
}

const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";
/** The consoles' icon, in the page itself (no request, so no 404): a spindle in a square, in the consoles' blue. */
const FAVICON = `data:image/svg+xml,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1f5fbf"/><path d="M5 3h6v4l-2 2v4H7V9L5 7z" fill="#fff"/></svg>')}`;
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string, script: string, style: string | null, workers: Record<string, string>): Buffer {
  return Buffer.from(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="${FAVICON}">
${Object.entries(workers).map(([w, file]) => `<meta name="console-worker-${escapeHtml(w)}" content="/assets/${escapeHtml(file)}">`).join('\n')}
${style ? `<link rel="stylesheet" href="/assets/${style}">` : ''}
<script type="module" src="/assets/${script}"></script>
</head>
<body>
<div id="app"></div>
<noscript>This console needs JavaScript. Every operation is also in the HTTP API: <a href="/api/docs">/api/docs</a>.</noscript>
</body>
</html>
`);
}

/** A console page: where it is served, which build entry, and its title. */
export interface ConsolePage {
  path: string;
  name: ConsoleName;
  title: string;
}

/** The consoles' pages and their shared `/assets/` route on `http`; the build is loaded at the first request (`npm start` builds it beforehand). */
export function serveConsoles(http: FastifyInstance, pages: readonly ConsolePage[], logger: Logger): void {
  let loading: Promise<Loaded> | undefined;
  const load = () =>
    (loading ??= ensureBuilt().then(({ dir, manifest }) => {
      const assets = new Map<string, { body: Buffer; gzip: Buffer; contentType: string }>();
      for (const a of Object.values(manifest.assets)) {
        assets.set(a.file, { body: readFileSync(join(dir, a.file)), gzip: readFileSync(join(dir, `${a.file}.gz`)), contentType: a.contentType });
      }
      const html = new Map<string, Buffer>();
      for (const p of pages) {
        const entry = manifest.consoles[p.name];
        if (!entry) throw new Error(`the build has no console '${p.name}'`);
        html.set(p.path, page(p.title, entry.script, entry.style, entry.workers ?? {}));
      }
      logger.info({ consoles: pages.map((p) => p.name), build: manifest.sourceHash }, 'web console ready');
      return { pages: html, assets };
    }).catch((err: unknown) => {
      loading = undefined;
      throw err;
    }));

  const unavailable = (reply: FastifyReply, err: unknown) => {
    logger.error({ err: (err as Error).message }, 'the web console could not be built');
    return reply.code(503).type('text/plain; charset=utf-8').send('The web console could not be built; see the log. The HTTP API is at /api/docs.');
  };
  /** The build, or undefined after answering 503. */
  const loadedOr503 = async (reply: FastifyReply): Promise<Loaded | undefined> => {
    try {
      return await load();
    } catch (err) {
      unavailable(reply, err);
      return undefined;
    }
  };
  const gzipOk = (request: FastifyRequest) => /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));

  for (const p of pages) {
    http.get(p.path, async (_request, reply) => {
      const loaded = await loadedOr503(reply);
      if (!loaded) return reply;
      return reply
        .header('cache-control', 'no-cache')
        .header('content-security-policy', CSP)
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'no-referrer')
        .type('text/html; charset=utf-8')
        .send(loaded.pages.get(p.path));
    });
  }
  http.get('/assets/:file', async (request, reply) => {
    const loaded = await loadedOr503(reply);
    if (!loaded) return reply;
    const file = (request.params as { file: string }).file;
    const asset = loaded.assets.get(file);
    if (!asset) return reply.code(404).type('text/plain; charset=utf-8').send('no such asset');
    reply.header('cache-control', 'public, max-age=31536000, immutable').header('x-content-type-options', 'nosniff').header('vary', 'accept-encoding').type(asset.contentType);
    if (gzipOk(request)) return reply.header('content-encoding', 'gzip').send(asset.gzip);
    return reply.send(asset.body);
  });
}

/** The gateway's fleet console at `/`. */
export const consolePlugin = definePlugin<GatewayContext>({
  name: 'console',
  register(ctx) {
    serveConsoles(ctx.http, [{ path: '/', name: 'gateway', title: `${ctx.identity.name} — fleet` }], ctx.logger.child({ component: 'console' }));
  },
});
