/**
 * One trace from an MCP client through the cloud and its embedded broker
 * (MQTT 3.1.1: the trace context rides in the request's envelope) to the
 * gateway: the cloud's HTTP span and relay producer span (cncgw-cloud), the
 * gateway's consumer span under it, then its tools/call and interface
 * spans (cncgw-gateway), with the SDK's in-memory exporter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { CloudRole } from '../../core/roles/cloud/role.js';
import { startTelemetry, type ProcessTelemetry } from '../../core/telemetry/start.js';
import { inRole } from '../../core/telemetry/tracing.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { connectMcp, type McpSession } from '../fixtures/mcp-client.js';
import { startTestCloud, untilOnline } from '../fixtures/cloud.js';

const exporter = new InMemorySpanExporter();
const CLIENT_TRACE = '5bf92f3577b34da6a3ce929d0e0e4736';

describe('tracing through the cloud relay', { timeout: 60_000 }, () => {
  let telemetry: ProcessTelemetry;
  let cloud: CloudRole;
  let gw: TestGateway;
  let session: McpSession;

  beforeAll(async () => {
    telemetry = await startTelemetry(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9/' }, ['gateway', 'cloud'], { processor: new SimpleSpanProcessor(exporter) });
    cloud = await inRole('cloud', () => startTestCloud({ callDeadlineMs: 20_000 }));
    const cloudUrl = await cloud.listen('127.0.0.1', 0);
    const { token } = await cloud.tokens.create('plant-t');
    gw = await inRole('gateway', () => startTestGateway({ gateway: { name: 'plant-t' }, machines: [simMachine('T1')], cloudLink: { brokerUrl: cloud.brokerUrl, accessToken: token } }));
    await untilOnline(cloud, token);
    session = await connectMcp(cloudUrl, undefined, { accesstoken: token, traceparent: `00-${CLIENT_TRACE}-1111111111111111-01` });
  }, 60_000);
  afterAll(async () => {
    await session?.close().catch(() => undefined);
    await gw?.stop();
    await cloud?.stop();
    await telemetry?.stop();
  });

  it('GW-85 a tools/call through the cloud is one trace: the gateway\'s spans under the cloud\'s producer span, every parent present', async () => {
    exporter.reset();
    expect((await session.call('list_machines')).isError).toBe(false);
    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === CLIENT_TRACE);
    const named = (name: string) => spans.find((s) => s.name === name) as ReadableSpan;
    const service = (s: ReadableSpan) => s.resource.attributes['service.name'];
    const parentOf = (s: ReadableSpan) => spans.find((p) => p.spanContext().spanId === s.parentSpanContext?.spanId);

    const producer = named('send tools/call list_machines');
    const consumer = named('process tools/call list_machines');
    const tool = named('tools/call list_machines');
    expect(producer.kind).toBe(3);
    expect(consumer.kind).toBe(4);
    expect(service(producer)).toBe('cncgw-cloud');
    expect(parentOf(producer)?.name).toBe('POST /mcp');
    expect(service(parentOf(producer)!)).toBe('cncgw-cloud');
    expect(parentOf(consumer)).toBe(producer);
    expect(service(consumer)).toBe('cncgw-gateway');
    expect(parentOf(tool)).toBe(consumer);
    expect(producer.attributes).toMatchObject({ 'messaging.system': 'mqtt', 'gen_ai.tool.name': 'list_machines', 'cncgw.outcome': 'ok' });
    expect(spans.length).toBeGreaterThanOrEqual(5);
    // Every span but the client's entry span has its parent in the trace.
    for (const s of spans) if (s.parentSpanContext?.spanId !== '1111111111111111') expect(parentOf(s), s.name).toBeDefined();
  });
});
