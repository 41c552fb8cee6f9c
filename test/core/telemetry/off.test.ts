/**
 * With no OTEL variable set, no request pays for tracing: the API is a
 * direct call, no span is made, no header is added, log lines stay as they were.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { createLogger } from '../../../core/telemetry/logger.js';
import { traceHttp } from '../../../core/telemetry/http.js';
import { startTelemetry } from '../../../core/telemetry/start.js';
import { activeTraceIds, injectTrace, inRole, inSpan, startSpan, tracingEnabled } from '../../../core/telemetry/tracing.js';

describe('tracing off', () => {
  it('with no OTEL variable, no exporter starts, no span is made and a request gets no traceresponse', async () => {
    const telemetry = await startTelemetry(undefined, {}, ['gateway'], { load: () => Promise.reject(new Error('the SDK must not be loaded')) });
    expect(telemetry.on).toBe(false);
    expect(tracingEnabled()).toBe(false);
    expect(startSpan('x', { role: 'gateway' })).toBeUndefined();
    expect(await inRole('gateway', () => inSpan('x', {}, () => 42))).toBe(42);
    expect(injectTrace({})).toEqual({});
    expect(activeTraceIds()).toBeUndefined();

    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString()), done()) });
    const app = Fastify({ loggerInstance: createLogger('info', sink, {}, telemetry.on) }) as unknown as FastifyInstance;
    traceHttp(app, 'gateway');
    app.get('/x', async (request) => (request.log.info('handling'), { ok: true }));
    const res = await app.inject({ method: 'GET', url: '/x', headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } });
    await app.close();
    expect(res.statusCode).toBe(200);
    expect(res.headers.traceresponse).toBeUndefined();
    expect(lines.join('')).not.toMatch(/trace_id|span_id/);
  });
});
