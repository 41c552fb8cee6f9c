/**
 * The program service's queries are client spans under the request's span,
 * named by operation and table; the SQL text and its values never appear.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { SqliteDatabase } from '../../../core/store/database.js';
import { querySummary, traceQueries } from '../../../core/telemetry/queries.js';
import { startTelemetry, type ProcessTelemetry } from '../../../core/telemetry/start.js';
import { inRole, inSpan } from '../../../core/telemetry/tracing.js';

const exporter = new InMemorySpanExporter();
let telemetry: ProcessTelemetry;
let raw: SqliteDatabase;

beforeAll(async () => {
  telemetry = await startTelemetry(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9/' }, ['programs'], { processor: new SimpleSpanProcessor(exporter) });
  raw = await SqliteDatabase.open(join(mkdtempSync(join(tmpdir(), 'trace-queries-')), 'programs.db'));
  await raw.write((tx) => tx.run('CREATE TABLE versions (id TEXT, body TEXT)'));
});
afterAll(async () => {
  await raw?.close();
  await telemetry?.stop();
});

describe('query spans', () => {
  it('a read and a write job under a request are client spans of cncgw-programs, by operation and table, without the SQL or its values', async () => {
    const db = traceQueries(raw);
    await inRole('programs', () =>
      inSpan('request', {}, async () => {
        await db.write((tx) => tx.run('INSERT INTO versions (id, body) VALUES (?, ?)', ['v1', 'O1000 (secret program)']), { transaction: true });
        expect(await db.get<{ body: string }>('SELECT body FROM versions WHERE id = ?', ['v1'])).toEqual({ body: 'O1000 (secret program)' });
      }),
    );
    const spans = exporter.getFinishedSpans();
    const request = spans.find((s) => s.name === 'request')!;
    const select = spans.find((s) => s.name === 'SELECT versions')!;
    const write = spans.find((s) => s.name === 'transaction')!;
    for (const span of [select, write]) {
      expect(span.kind).toBe(2);
      expect(span.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
      expect(span.resource.attributes['service.name']).toBe('cncgw-programs');
    }
    expect(select.attributes).toEqual({ 'db.system.name': 'sqlite', 'db.operation.name': 'SELECT', 'db.collection.name': 'versions' });
    expect(JSON.stringify(spans.map((s) => [s.name, s.attributes]))).not.toMatch(/secret program|v1|WHERE/);
  });

  it('a statement\'s summary is its operation and table', () => {
    expect(querySummary('SELECT a FROM programs p JOIN versions v ON v.p = p.id')).toEqual({ name: 'SELECT programs', operation: 'SELECT', table: 'programs' });
    expect(querySummary('UPDATE deployments SET status = ?')).toEqual({ name: 'UPDATE deployments', operation: 'UPDATE', table: 'deployments' });
    expect(querySummary('PRAGMA foreign_keys')).toEqual({ name: 'PRAGMA', operation: 'PRAGMA', table: undefined });
  });
});
