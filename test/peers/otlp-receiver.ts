/**
 * A small OTLP/HTTP receiver for the peer tests: it takes the JSON export
 * requests (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) on 127.0.0.1 at a port
 * the system picks, and keeps every span with its resource's service.name.
 */
import { createServer } from 'node:http';

export interface ReceivedSpan { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; service: string }

/** The spans of an OTLP/HTTP JSON export request, with their resource's service.name. */
export function spansOf(body: unknown): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of (body as { resourceSpans?: unknown[] }).resourceSpans ?? []) {
    const r = rs as { resource?: { attributes?: { key: string; value: { stringValue?: string } }[] }; scopeSpans?: { spans?: Omit<ReceivedSpan, 'service'>[] }[] };
    const service = r.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
    for (const ss of r.scopeSpans ?? []) for (const s of ss.spans ?? []) out.push({ ...s, service });
  }
  return out;
}

export interface OtlpReceiver {
  /** Every span received so far. */
  received: ReceivedSpan[];
  /** The OTEL_* variables that make a process export here, every 200 ms. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** Starts a receiver; resolves once it listens. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      if (req.url === '/v1/traces') received.push(...spansOf(JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const env = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(server.address() as { port: number }).port}`, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '200' };
  return { received, env, close: () => new Promise<void>((r) => server.close(() => r())) };
}
