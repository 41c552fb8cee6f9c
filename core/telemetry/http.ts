/**
 * A server span for every request to a role's listener: continued from the
 * caller's `traceparent`/`tracestate` when it sends one, returned in
 * `traceresponse`, named `METHOD route` with the HTTP semantic conventions'
 * attributes (the path, never the query string). The route's handler runs
 * inside the span, so the spans it starts and the lines it logs belong to
 * it. Installed only while tracing is on: otherwise a request pays nothing.
 *
 * Call it on a new app, before its routes: handlers are wrapped as routes
 * are added (fastify's onRoute).
 */
import { context } from '@opentelemetry/api';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { extractTrace, startSpan, traceResponse, tracingEnabled, type OpenSpan } from './tracing.js';

const spans = new WeakMap<FastifyRequest, OpenSpan>();

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

function begin(role: string, request: FastifyRequest, reply: FastifyReply): void {
  if (!tracingEnabled()) return;
  const route = request.routeOptions.url;
  const open = startSpan(route ? `${request.method} ${route}` : request.method, {
    kind: 'server',
    role,
    parent: extractTrace(request.headers),
    attributes: {
      'http.request.method': request.method,
      'http.route': route,
      'url.path': pathOf(request.url),
      'url.scheme': request.protocol,
      'client.address': request.ip,
      'user_agent.original': request.headers['user-agent'],
      'network.protocol.version': request.raw.httpVersion,
    },
  });
  if (!open) return;
  spans.set(request, open);
  reply.header('traceresponse', traceResponse(open.span));
}

/** Ends the request's span with the answer's status, or as aborted (no status) when the caller went away. */
function finish(request: FastifyRequest, status: number | undefined): void {
  const open = spans.get(request);
  if (!open) return;
  spans.delete(request);
  if (status === undefined) open.fail('aborted');
  else {
    open.set({ 'http.response.status_code': status });
    if (status >= 500) open.fail(String(status));
  }
  open.end();
}

/** Adds the server spans of `role` to `app` when tracing is on; nothing otherwise. */
export function traceHttp(app: FastifyInstance, role: string): void {
  if (!tracingEnabled()) return;
  app.addHook('onRoute', (route) => {
    const handler = route.handler as RouteHandlerMethod;
    route.handler = function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      const open = spans.get(request);
      return open ? context.with(open.context, handler, this, request, reply) : handler.call(this, request, reply);
    } as RouteHandlerMethod;
  });
  app.addHook('onRequest', (request, reply, done) => {
    begin(role, request, reply);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    finish(request, reply.statusCode);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    finish(request, undefined);
    done();
  });
}
