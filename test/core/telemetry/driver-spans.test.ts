/**
 * A driver's own requests are client spans under the live read that asked
 * for them (SDK in-memory exporter), with the machine, the protocol and the
 * controller's address; a poll outside any span makes none.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFocasBridge } from '../../../drivers/focas/simulator.js';
import { startModbusSimulator } from '../../../drivers/modbus/simulator.js';
import { startOpcuaServer, type RunningOpcuaSimulator } from '../../../drivers/opcua/simulator.js';
import type { RunningSimulator } from '../../../drivers/protocol-simulator.js';
import { startTelemetry, type ProcessTelemetry } from '../../../core/telemetry/start.js';
import { inRole, inSpan } from '../../../core/telemetry/tracing.js';
import { focasClient } from '../../drivers/focas/bridge-fixtures.js';
import { modbusClient } from '../../drivers/modbus/helpers.js';
import { MILL, opcuaClient } from '../../drivers/opcua/helpers.js';

const exporter = new InMemorySpanExporter();
let telemetry: ProcessTelemetry;
let sim: RunningSimulator;
let opcua: RunningOpcuaSimulator;
let focas: Awaited<ReturnType<typeof startFocasBridge>>;

beforeAll(async () => {
  telemetry = await startTelemetry(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9/' }, ['gateway'], { processor: new SimpleSpanProcessor(exporter) });
  sim = await startModbusSimulator({ machines: [{ machineID: 'MB-01', seed: 5, machineType: 'mill', system: 'FANUC' }] });
  opcua = await startOpcuaServer({ machines: [MILL], securityModes: ['None'] });
  focas = await startFocasBridge({ machines: [{ machineID: 'FC-01', seed: 3, machineType: 'mill', system: 'FANUC' }] });
}, 60_000);
afterAll(async () => {
  await sim?.close();
  await opcua?.close();
  await focas?.close();
  await telemetry?.stop();
});
beforeEach(() => exporter.reset());

describe('driver request spans', () => {
  it('Modbus: each register read is a client span under the live read, with the machine, the protocol and the peer', async () => {
    const client = modbusClient(sim.port, { unitId: 1 });
    try {
      await client.connect();
      await inRole('gateway', () => inSpan('read status', { kind: 'client' }, () => client.read('status')));
    } finally {
      await client.close();
    }
    const spans = exporter.getFinishedSpans();
    const live = spans.find((s) => s.name === 'read status')!;
    const requests = spans.filter((s) => s.name.startsWith('modbus read '));
    expect(requests.length).toBe(client.requestsFor('status').length);
    expect(requests.length).toBeGreaterThan(0);
    for (const r of requests) {
      expect(r.parentSpanContext?.spanId).toBe(live.spanContext().spanId);
      expect(r.kind).toBe(2);
      expect(r.resource.attributes['service.name']).toBe('cncgw-gateway');
      expect(r.attributes).toMatchObject({ 'cncgw.protocol': 'modbus', 'cncgw.machine.id': 'MB-01', 'network.peer.address': '127.0.0.1', 'network.peer.port': sim.port });
    }
    expect(requests.map((r) => r.attributes['rpc.method']).sort()).toEqual(client.requestsFor('status').map((r) => r.function).sort());
  });

  it('OPC UA: a Read request of a live read (the subscription off) is a client span under it, with the machine, the protocol and the peer', { timeout: 60_000 }, async () => {
    // Without the subscription, every read is a Read request.
    const client = opcuaClient(opcua.port, mkdtempSync(join(tmpdir(), 'opcua-spans-')), { machine: 'MC-1', connectTimeoutMs: 30_000, subscription: false });
    try {
      await client.connect();
      await inRole('gateway', () => inSpan('read count', { kind: 'client' }, () => client.read('count')));
    } finally {
      await client.close();
    }
    const spans = exporter.getFinishedSpans();
    const live = spans.find((s) => s.name === 'read count')!;
    const requests = spans.filter((s) => s.name === 'opcua Read');
    expect(requests.length).toBeGreaterThan(0);
    for (const r of requests) {
      expect(r.parentSpanContext?.spanId).toBe(live.spanContext().spanId);
      expect(r.kind).toBe(2);
      expect(r.attributes).toMatchObject({ 'cncgw.protocol': 'opcua', 'cncgw.machine.id': 'MC-1', 'network.peer.address': '127.0.0.1', 'network.peer.port': opcua.port, 'rpc.method': 'Read' });
    }
  });

  it('FOCAS: each bridge call of a live read is a client span under it, named after the FOCAS function, with the machine, the protocol and the bridge', async () => {
    const client = focasClient(focas.port, { cnc: 'FC-01' });
    try {
      await client.connect();
      await inRole('gateway', () => inSpan('read count', { kind: 'client' }, () => client.read('count')));
    } finally {
      await client.close();
    }
    const spans = exporter.getFinishedSpans();
    const live = spans.find((s) => s.name === 'read count')!;
    const calls = spans.filter((s) => s.name.startsWith('focas '));
    expect(calls.length).toBeGreaterThan(0);
    for (const c of calls) {
      expect(c.parentSpanContext?.spanId).toBe(live.spanContext().spanId);
      expect(c.name).toBe(`focas ${String(c.attributes['rpc.method'])}`);
      expect(c.attributes['rpc.method']).toMatch(/^cnc_/);
      expect(c.attributes).toMatchObject({ 'cncgw.protocol': 'focas', 'cncgw.machine.id': 'M', 'network.peer.address': '127.0.0.1', 'network.peer.port': focas.port });
    }
  });

  it('a poll outside any span (an actor\'s) makes no driver spans', async () => {
    const client = modbusClient(sim.port, { unitId: 1 });
    try {
      await client.connect();
      await inRole('gateway', () => client.read('status'));
    } finally {
      await client.close();
    }
    expect(exporter.getFinishedSpans()).toHaveLength(0);
  });
});
