/**
 * A real gateway traced with the SDK's in-memory exporter: an MCP
 * `tools/call` over /mcp is one trace continuing the client's traceparent
 * (HTTP server span → `tools/call {tool}` → its interface calls), and an
 * interface called over /api has its span under the request's.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { startTelemetry, type ProcessTelemetry } from '../../../core/telemetry/start.js';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { connectMcp, type McpSession } from '../../fixtures/mcp-client.js';

const exporter = new InMemorySpanExporter();
const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
let telemetry: ProcessTelemetry;
let gw: TestGateway;
let url: string;
let mcp: McpSession;

const byName = (name: string) => exporter.getFinishedSpans().filter((s) => s.name === name);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

beforeAll(async () => {
  telemetry = await startTelemetry(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9/' }, ['gateway'], { processor: new SimpleSpanProcessor(exporter) });
  gw = await startTestGateway({ machines: [simMachine('D1'), simMachine('D2')], groups: [{ groupID: 'g1', name: 'G1', machineIDs: ['D1', 'D2'] }] });
  url = await gw.gateway.listen({ host: '127.0.0.1', port: 0 });
  const adminKey = ((await gw.request('POST', '/api/security/secret-key/create', { username: 'admin' })).body.data as { key: string }).key;
  mcp = await connectMcp(url, adminKey, { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` });
}, 60_000);
afterAll(async () => {
  await mcp?.close();
  await gw?.stop();
  await telemetry?.stop();
});
beforeEach(() => exporter.reset());

describe('gateway spans', () => {
  it('GW-35 a tools/call continues the MCP client\'s traceparent: POST /mcp → tools/call {tool} → its interface calls, all of cncgw-gateway', async () => {
    const result = await mcp.call('get_fleet_status', {});
    expect(result.isError).toBe(false);
    const [tool] = byName('tools/call get_fleet_status');
    expect(tool).toBeDefined();
    expect(tool!.spanContext().traceId).toBe(CLIENT_TRACE);
    expect(tool!.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'get_fleet_status', 'gen_ai.operation.name': 'execute_tool', 'cncgw.outcome': 'ok' });
    const http = exporter.getFinishedSpans().find((s) => s.spanContext().spanId === parentOf(tool!));
    expect(http?.name).toBe('POST /mcp');
    expect(parentOf(http!)).toBe(CLIENT_SPAN);
    const calls = exporter.getFinishedSpans().filter((s) => parentOf(s) === tool!.spanContext().spanId && s.attributes['cncgw.interface'] !== undefined);
    expect(calls.length).toBeGreaterThan(0);
    for (const span of [tool!, http!, ...calls]) expect(span.resource.attributes['service.name']).toBe('cncgw-gateway');
  });

  it('GW-92 a tool error is an outcome on its span, with the machine it named', async () => {
    const result = await mcp.call('read_machine', { machineID: 'NOPE' });
    expect(result.isError).toBe(true);
    const [tool] = byName('tools/call read_machine');
    expect(tool!.attributes).toMatchObject({ 'cncgw.outcome': 'tool_error', 'error.type': 'tool_error' });
    expect(tool!.attributes['cncgw.machine.id']).toBe('NOPE');
    expect(tool!.status.code).toBe(2);
  });

  it('an interface called over /api has its span under the request\'s, with its outcome', async () => {
    const res = await fetch(`${url}/api/system/gateway-info`, { headers: { authorization: `Bearer ${gw.adminToken}` } });
    expect(res.status).toBe(200);
    const [call] = byName('/api/system/gateway-info');
    const [http] = byName('GET /api/system/gateway-info');
    expect(parentOf(call!)).toBe(http!.spanContext().spanId);
    expect(call!.attributes).toMatchObject({ 'cncgw.interface': '/api/system/gateway-info', 'cncgw.outcome': 'ok' });
    expect(res.headers.get('traceresponse')).toBe(`00-${http!.spanContext().traceId}-${http!.spanContext().spanId}-01`);
  });

  it('a refused interface call records its error code', async () => {
    expect((await fetch(`${url}/api/config/machine?machineID=NOPE`, { headers: { authorization: `Bearer ${gw.adminToken}` } })).ok).toBe(false);
    const [call] = byName('/api/config/machine');
    expect(call?.attributes).toMatchObject({ 'cncgw.outcome': 'error', 'cncgw.error.code': 'GENERAL_MACHINE_ID_NOT_EXISTED', 'cncgw.machine.id': 'NOPE' });
    expect(call!.status.code).toBe(2);
  });

  it('a live read is a client span of its driver request, with the machine and the protocol, under the interface\'s span', async () => {
    const res = await fetch(`${url}/api/cnc/readCNCStatusDetails?machineID=D1`, { headers: { authorization: `Bearer ${gw.adminToken}` } });
    expect(res.status).toBe(200);
    const [read] = byName('read status');
    const [call] = byName('/api/cnc/readCNCStatusDetails');
    expect(read?.kind).toBe(2);
    expect(read!.attributes).toMatchObject({ 'cncgw.machine.id': 'D1', 'cncgw.protocol': 'simulator' });
    expect(parentOf(read!)).toBe(call!.spanContext().spanId);
  });
});
