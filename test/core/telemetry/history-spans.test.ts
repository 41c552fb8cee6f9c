/**
 * Each history flush is a span of its own trace in the gateway's service,
 * with the rows it wrote, even when its timer was set going during a
 * request (the request's trace does not wait for the flush).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Database } from '../../../core/store/database.js';
import { migrateGatewayStore } from '../../../core/roles/gateway/store/schema.js';
import { HistoryWriter } from '../../../core/roles/gateway/history/writer.js';
import { startTelemetry, type ProcessTelemetry } from '../../../core/telemetry/start.js';
import { inRole, inSpan } from '../../../core/telemetry/tracing.js';

const exporter = new InMemorySpanExporter();
let telemetry: ProcessTelemetry;
let db: Database;

beforeAll(async () => {
  telemetry = await startTelemetry(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9/' }, ['gateway'], { processor: new SimpleSpanProcessor(exporter) });
  db = await Database.open(join(mkdtempSync(join(tmpdir(), 'trace-history-')), 'gateway.db'));
  await migrateGatewayStore(db);
});
afterAll(async () => {
  await db?.close();
  await telemetry?.stop();
});

describe('history flush spans', () => {
  it('a flush is a root span of cncgw-gateway with the rows it wrote, not a child of the request that queued them', async () => {
    const writer = await HistoryWriter.open(db, { flushIntervalMs: 60_000 });
    await inRole('gateway', () =>
      inSpan('request', {}, async () => {
        for (let i = 0; i < 3; i++) writer.push({ machineID: 'M1', cls: 'Heartbeat', ts: 1_700_000_000_000 + i, data: { i } });
        await writer.flush();
      }),
    );
    await writer.close();
    const flush = exporter.getFinishedSpans().find((s) => s.name === 'history flush');
    const request = exporter.getFinishedSpans().find((s) => s.name === 'request');
    expect(flush?.resource.attributes['service.name']).toBe('cncgw-gateway');
    expect(flush!.attributes).toMatchObject({ 'cncgw.history.rows': 3, 'db.system.name': 'sqlite', 'db.collection.name': 'history' });
    expect(flush!.parentSpanContext).toBeUndefined();
    expect(flush!.spanContext().traceId).not.toBe(request!.spanContext().traceId);
  });
});
