/**
 * Spans with the SDK's in-memory exporter: each role's own service, the
 * HTTP server span (traceparent continued, traceresponse returned), log
 * lines with trace_id/span_id, and the attribute allow-list.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { createLogger } from '../../../core/telemetry/logger.js';
import { traceHttp } from '../../../core/telemetry/http.js';
import { startTelemetry, type ProcessTelemetry } from '../../../core/telemetry/start.js';
import { ATTRIBUTE_MAX_CHARS } from '../../../core/telemetry/attributes.js';
import { inRole, inSpan, injectTrace } from '../../../core/telemetry/tracing.js';

const exporter = new InMemorySpanExporter();
let telemetry: ProcessTelemetry;
const serviceOf = (span: ReadableSpan) => span.resource.attributes['service.name'];
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

beforeAll(async () => {
  telemetry = await startTelemetry(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9/' }, ['gateway', 'programs', 'cloud'], { processor: new SimpleSpanProcessor(exporter) });
});
afterAll(() => telemetry.stop());
beforeEach(() => exporter.reset());

describe('spans', () => {
  it('each role has its own service; a span started in one role under another role\'s span joins its trace', async () => {
    await inRole('programs', () =>
      inSpan('deployment', {}, () => inRole('gateway', () => inSpan('transfer', {}, () => undefined))),
    );
    const [inner, outer] = exporter.getFinishedSpans();
    expect(serviceOf(outer!)).toBe('cncgw-programs');
    expect(serviceOf(inner!)).toBe('cncgw-gateway');
    expect(inner!.spanContext().traceId).toBe(outer!.spanContext().traceId);
    expect(parentOf(inner!)).toBe(outer!.spanContext().spanId);
  });

  it('a failure marks the span with its error code, never its message, and is thrown on', async () => {
    const failure = Object.assign(new Error('token abc123 refused'), { errorName: 'UNAUTHORIZED' });
    await expect(inRole('gateway', () => inSpan('call', {}, () => Promise.reject(failure)))).rejects.toBe(failure);
    const [span] = exporter.getFinishedSpans();
    expect(span!.status.code).toBe(2);
    expect(span!.attributes['error.type']).toBe('UNAUTHORIZED');
    expect(JSON.stringify({ attributes: span!.attributes, status: span!.status, events: span!.events })).not.toContain('abc123');
  });

  it('a child-only span is not started without an active span (background work makes no trace of its own)', async () => {
    await inRole('gateway', () => inSpan('poll', { childOnly: true }, () => undefined));
    expect(exporter.getFinishedSpans()).toHaveLength(0);
  });

  it('nothing secret in a span: only allowed attributes are kept, text cut to its bound', async () => {
    await inRole('gateway', () =>
      inSpan('call', { attributes: { authorization: 'Bearer s3cret', password: 'pw', 'http.request.header.cookie': 'sid=1', 'db.query.text': "INSERT … 'G-code'", 'cncgw.program.body': 'G01 X1', 'cncgw.machine.id': 'M1', 'url.path': `/${'x'.repeat(1000)}` } }, (note) => {
        note.set({ token: 't0k3n', 'cncgw.outcome': 'ok' });
      }),
    );
    const [span] = exporter.getFinishedSpans();
    expect(Object.keys(span!.attributes).sort()).toEqual(['cncgw.machine.id', 'cncgw.outcome', 'url.path']);
    expect((span!.attributes['url.path'] as string).length).toBe(ATTRIBUTE_MAX_CHARS);
    expect(JSON.stringify(span!.attributes)).not.toMatch(/s3cret|pw|sid=1|G-code|G01|t0k3n/);
  });
});

describe('HTTP server spans', () => {
  let app: FastifyInstance;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>), done()) });
    app = Fastify({ loggerInstance: createLogger('info', sink, {}, true) }) as unknown as FastifyInstance;
    traceHttp(app, 'gateway');
    app.post('/api/things/:id', async (request) => {
      request.log.info('handling');
      return inSpan('inner', {}, () => ({ ok: true }));
    });
    app.get('/boom', async () => {
      throw new Error('boom');
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => app.close());

  const url = (path: string) => `http://127.0.0.1:${(app.server.address() as { port: number }).port}${path}`;

  it('a request gets a server span named after its route, with the path (no query) and status; traceresponse names it', async () => {
    const res = await fetch(url('/api/things/7?token=s3cret'), { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer s3cret' }, body: '{"password":"pw"}' });
    expect(res.status).toBe(200);
    const spans = exporter.getFinishedSpans();
    const server = spans.find((s) => s.name === 'POST /api/things/:id');
    const inner = spans.find((s) => s.name === 'inner');
    expect(server?.kind).toBe(1);
    expect(serviceOf(server!)).toBe('cncgw-gateway');
    expect(server!.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/api/things/:id', 'url.path': '/api/things/7', 'http.response.status_code': 200, 'client.address': '127.0.0.1' });
    expect(JSON.stringify(server!.attributes)).not.toMatch(/s3cret|pw/);
    expect(parentOf(inner!)).toBe(server!.spanContext().spanId);
    const { traceId, spanId } = server!.spanContext();
    expect(res.headers.get('traceresponse')).toBe(`00-${traceId}-${spanId}-01`);
  });

  it('a caller\'s traceparent is continued: the server span is its child in its trace', async () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await fetch(url('/api/things/1'), { method: 'POST', headers: { traceparent, 'content-type': 'application/json' }, body: '{}' });
    const server = exporter.getFinishedSpans().find((s) => s.name === 'POST /api/things/:id');
    expect(server!.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(parentOf(server!)).toBe('b7ad6b7169203331');
  });

  it('a log line written while serving a request carries the trace_id and span_id of its span', async () => {
    lines.length = 0;
    await fetch(url('/api/things/2'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const server = exporter.getFinishedSpans().find((s) => s.name === 'POST /api/things/:id');
    const line = lines.find((l) => l.msg === 'handling');
    expect(line).toMatchObject({ trace_id: server!.spanContext().traceId, span_id: server!.spanContext().spanId });
  });

  it('a 5xx answer marks the span failed', async () => {
    expect((await fetch(url('/boom'))).status).toBe(500);
    const server = exporter.getFinishedSpans().find((s) => s.name === 'GET /boom');
    expect(server!.status.code).toBe(2);
    expect(server!.attributes['http.response.status_code']).toBe(500);
  });

  it('injectTrace writes the active span\'s traceparent for the next hop', async () => {
    const carrier = await inRole('cloud', () => inSpan('relay', { kind: 'producer' }, () => injectTrace({})));
    const [relay] = exporter.getFinishedSpans();
    expect(carrier.traceparent).toBe(`00-${relay!.spanContext().traceId}-${relay!.spanContext().spanId}-01`);
  });
});
