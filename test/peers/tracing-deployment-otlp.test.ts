/**
 * A deployment batch as one trace across processes, exported over OTLP/HTTP
 * (JSON) to the receiver written for the peer tests: a program service and
 * a gateway, each its own `core/main.ts` process, the service reaching the
 * gateway over HTTP with a secret key. A batch to two machines gives one
 * trace with spans of cncgw-programs and cncgw-gateway, every parent present.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simMachine } from '../fixtures/gateway.js';
import { startGatewayProcess, type GatewayProcess } from '../fixtures/gateway-process.js';
import { adminOf, startServiceProcess, type ServiceProcess } from '../fixtures/programs-process.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

const PASSWORD = 'trace-deployment-admin-password';
const DIR = '//CNC_MEM/USER/PATH1/';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a deployment traced across processes (OTLP/HTTP)', { timeout: 180_000 }, () => {
  let receiver: OtlpReceiver;
  let gateway: GatewayProcess | undefined;
  let programs: ServiceProcess | undefined;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    const gwDir = mkdtempSync(join(tmpdir(), 'trace-deploy-gw-'));
    const gwConfig = join(gwDir, 'config.json');
    writeFileSync(gwConfig, JSON.stringify({ dataDir: gwDir, timeZone: 'UTC', logLevel: 'warn', gateway: { name: 'plant-d' }, communication: { host: '127.0.0.1', port: 0 }, machines: ['D1', 'D2'].map((id) => simMachine(id, { tasks: {} })) }));
    gateway = await startGatewayProcess(gwConfig, PASSWORD, receiver.env);

    const svcDir = mkdtempSync(join(tmpdir(), 'trace-deploy-programs-'));
    const svcConfig = join(svcDir, 'config.json');
    writeFileSync(svcConfig, JSON.stringify({ roles: ['programs'], gateway: { dataDir: svcDir, timeZone: 'UTC' }, logLevel: 'warn', machines: [], programs: { host: '127.0.0.1', port: 0 } }));
    programs = await startServiceProcess(svcConfig, PASSWORD, { env: receiver.env });
  }, 180_000);

  afterAll(async () => {
    for (const p of [programs, gateway]) {
      if (!p || p.child.exitCode !== null || p.child.signalCode !== null) continue;
      p.child.kill('SIGTERM');
      await p.exited;
    }
    await receiver?.close();
  });

  it('a batch to two machines is one trace: cncgw-programs and cncgw-gateway spans, every parent present, the gateway\'s under the transfer steps', async () => {
    // A secret key on the gateway for the service, as an operator makes one.
    const login = await fetch(`${gateway!.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: PASSWORD }) });
    const token = ((await login.json()) as { data: { token: string } }).data.token;
    const made = await fetch(`${gateway!.url}/api/security/secret-key/create`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', label: 'program service' }) });
    const key = ((await made.json()) as { data: { key: string } }).data.key;

    const api = await adminOf(programs!.url, PASSWORD);
    const registered = await api.post('/gateways', { name: 'plant-d', url: gateway!.url, secretKey: key });
    expect(registered.status).toBe(201);
    expect((await api.post(`/gateways/${registered.body.id as string}/sync`)).status).toBe(200);
    const machines = Object.fromEntries(((await api.get('/machines')).body.items ?? []).map((m) => [m.machineId, m.id]));
    const lib = (await api.post('/libraries', { name: 'Traced', approvalPolicy: { mode: 'autoRelease' } })).body.id as string;
    const programId = (await api.post('/programs', { libraryId: lib, name: 'O4300', controller: 'fanuc' })).body.id as string;
    const uploaded = await api.post(`/programs/${programId}/versions`, { contentBase64: Buffer.from('%\nO4300 (ACROSS)\nG90\nM30\n%\n').toString('base64'), notes: '' });
    const version = (await api.post(`/versions/${uploaded.body.id as string}/submit`)).body.version as { id: string };
    const assignments = await Promise.all(['D1', 'D2'].map(async (m) => (await api.post('/machine-assignments', { programId, machineId: machines[m], dir: DIR })).body.id as string));

    const batch = await api.post('/deployments', { versionId: version.id, assignmentIds: assignments, isTrial: false, trialHours: null });
    expect(batch.status).toBe(201);
    const batchId = batch.body.batchId as string;
    for (const end = Date.now() + 60_000; ; await sleep(250)) {
      const rows = (await api.get(`/deployments?batchId=${batchId}`)).body.items ?? [];
      if (rows.length === 2 && rows.every((d) => d.status === 'Succeeded')) break;
      if (Date.now() > end) throw new Error(`the batch did not succeed: ${rows.map((d) => `${String(d.status)} ${String(d.reason)}`).join('; ')}`);
    }

    // The spans come in batches every 200 ms: wait for both transfers' verify steps and the gateway's spans under them.
    const batchSpan = () => receiver.received.find((s) => s.name === 'deployment batch');
    const trace = (): ReceivedSpan[] => receiver.received.filter((s) => s.traceId === batchSpan()?.traceId);
    const complete = () => trace().filter((s) => s.name === 'deployment transfer').length === 2
      && trace().filter((s) => s.name === 'deployment verify').length === 2
      && trace().filter((s) => s.service === 'cncgw-gateway' && s.kind === 2).length >= 4;
    for (const end = Date.now() + 20_000; !complete(); await sleep(200)) if (Date.now() > end) break;

    const spans = trace();
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['cncgw-programs', 'cncgw-gateway']));
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    // The request's server span is the trace's root; every other span's parent arrived too.
    const roots = spans.filter((s) => !s.parentSpanId);
    expect(roots.map((s) => s.name)).toEqual(['POST /api/v1/deployments']);
    for (const s of spans) if (s.parentSpanId) expect(byId.get(s.parentSpanId), `${s.service} ${s.name}'s parent`).toBeDefined();
    const transfers = spans.filter((s) => s.name === 'deployment transfer');
    expect(transfers.map((t) => t.parentSpanId)).toEqual([batchSpan()!.spanId, batchSpan()!.spanId]);
    // Each step's HTTP call (client, cncgw-programs) is continued by the gateway's server span (cncgw-gateway).
    for (const step of spans.filter((s) => s.name === 'deployment upload' || s.name === 'deployment verify')) {
      const client = spans.find((s) => s.parentSpanId === step.spanId && s.kind === 3);
      expect(client?.service, step.name).toBe('cncgw-programs');
      const server = spans.find((s) => s.parentSpanId === client?.spanId);
      expect(server?.service, step.name).toBe('cncgw-gateway');
      expect(server?.name).toMatch(/^(POST|GET) \/api\/file\/program\/(upload|download)$/);
    }
  });
});
