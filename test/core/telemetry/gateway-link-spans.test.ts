/**
 * The program service's calls to a gateway continue its trace into the
 * gateway, over the in-process link and over HTTP alike: the gateway's
 * spans (cncgw-gateway) sit under the program service's (cncgw-programs).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { HttpGatewayLink } from '../../../core/gateway-link/http.js';
import { InProcessGatewayLink } from '../../../core/gateway-link/in-process.js';
import { startTelemetry, type ProcessTelemetry } from '../../../core/telemetry/start.js';
import { inRole, inSpan } from '../../../core/telemetry/tracing.js';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';

const exporter = new InMemorySpanExporter();
let telemetry: ProcessTelemetry;
let gw: TestGateway;
let url: string;
let adminKey: string;

const service = (s: ReadableSpan) => s.resource.attributes['service.name'];
const spans = () => exporter.getFinishedSpans();
const parentOf = (s: ReadableSpan) => spans().find((p) => p.spanContext().spanId === s.parentSpanContext?.spanId);

beforeAll(async () => {
  telemetry = await startTelemetry(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9/' }, ['gateway', 'programs'], { processor: new SimpleSpanProcessor(exporter) });
  gw = await startTestGateway({ machines: [simMachine('L1')] });
  url = await gw.gateway.listen({ host: '127.0.0.1', port: 0 });
  adminKey = ((await gw.request('POST', '/api/security/secret-key/create', { username: 'admin' })).body.data as { key: string }).key;
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await telemetry?.stop();
});
beforeEach(() => exporter.reset());

describe('gateway link spans', () => {
  it('in-process: the gateway\'s interface span is cncgw-gateway, under the program service\'s span', async () => {
    const link = new InProcessGatewayLink(gw.gateway.context.interfaces);
    const machines = await inRole('programs', () => inSpan('deployment', {}, () => link.listMachines()));
    expect(machines.map((m) => m.machineID)).toEqual(['L1']);
    const outer = spans().find((s) => s.name === 'deployment')!;
    const call = spans().find((s) => s.attributes['cncgw.interface'] !== undefined)!;
    expect(service(outer)).toBe('cncgw-programs');
    expect(service(call)).toBe('cncgw-gateway');
    expect(parentOf(call)).toBe(outer);
  });

  it('HTTP: a client span sends traceparent; the gateway\'s server span continues it', async () => {
    const link = new HttpGatewayLink(url, adminKey);
    await inRole('programs', () => inSpan('deployment', {}, () => link.listMachines()));
    const outer = spans().find((s) => s.name === 'deployment')!;
    const client = spans().find((s) => s.kind === 2)!;
    const server = spans().find((s) => s.kind === 1)!;
    expect(service(client)).toBe('cncgw-programs');
    expect(parentOf(client)).toBe(outer);
    expect(client.attributes['http.response.status_code']).toBe(200);
    expect(service(server)).toBe('cncgw-gateway');
    expect(parentOf(server)).toBe(client);
    expect(new Set(spans().map((s) => s.spanContext().traceId)).size).toBe(1);
  });

  it('background calls (no span active) make no trace of their own', async () => {
    await inRole('programs', () => new HttpGatewayLink(url, adminKey).listMachines());
    expect(spans().filter((s) => service(s) === 'cncgw-programs')).toHaveLength(0);
  });
});
