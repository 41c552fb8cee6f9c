/**
 * A deployment batch is one trace (SDK in-memory exporter): the request's
 * span, the batch's span, a transfer span per machine with its steps
 * (upload, verify; a read-back first when resumed), and the gateway's
 * interface calls under them through the in-process link; a deployment
 * another instance takes over continues the trace stored with its batch.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { InProcessGatewayLink } from '../../../core/gateway-link/in-process.js';
import { startTelemetry, type ProcessTelemetry } from '../../../core/telemetry/start.js';
import { inRole } from '../../../core/telemetry/tracing.js';
import { assignmentsPlugin } from '../../../plugins/assignments/index.js';
import { deploymentsPlugin } from '../../../plugins/deployments/index.js';
import { DEPLOYMENT_MACHINE_VERSION } from '../../../plugins/deployments/machine.js';
import { startBatchSpan } from '../../../plugins/deployments/trace.js';
import { gatewaysPlugin } from '../../../plugins/gateways/index.js';
import type { FleetMachine } from '../../../plugins/gateways/service.js';
import { vaultPlugin } from '../../../plugins/vault/index.js';
import { webhooksPlugin } from '../../../plugins/webhooks/index.js';
import { sqliteEngine } from '../../fixtures/database-engines.js';
import { deploymentInstance } from '../../fixtures/deployment-instance.js';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, type Session } from '../../fixtures/programs-accounts.js';
import { batchOf } from './store-cases.js';

const DIR = '//CNC_MEM/USER/PATH1/';
const PLUGINS = [TEST_ACCOUNTS, vaultPlugin, gatewaysPlugin, assignmentsPlugin, deploymentsPlugin, webhooksPlugin];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

const exporter = new InMemorySpanExporter();
let telemetry: ProcessTelemetry;
let gw: TestGateway;
const engine = sqliteEngine();

const spans = () => exporter.getFinishedSpans();
const service = (s: ReadableSpan) => s.resource.attributes['service.name'];
const idOf = (s: ReadableSpan) => s.spanContext().spanId;
const named = (name: string) => spans().filter((s) => s.name === name);
const childrenOf = (parent: ReadableSpan) => spans().filter((s) => s.parentSpanContext?.spanId === idOf(parent));

/** Waits until `done` holds of the finished spans. */
async function spansUntil(done: () => boolean, what: string): Promise<void> {
  for (const end = Date.now() + 20_000; !done(); await sleep(50)) {
    if (Date.now() > end) throw new Error(`${what}; spans: ${spans().map((s) => s.name).join(', ')}`);
  }
}

beforeAll(async () => {
  telemetry = await startTelemetry(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9/' }, ['gateway', 'programs'], { processor: new SimpleSpanProcessor(exporter) });
  gw = await startTestGateway({ machines: ['T1', 'T2', 'T3'].map((id) => simMachine(id, { tasks: {} })), groups: [{ groupID: 'pair', name: 'Pair', machineIDs: ['T1', 'T2'] }] });
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await telemetry?.stop();
  engine.remove();
});
beforeEach(() => exporter.reset());

describe('a deployment batch as one trace', () => {
  let svc: TestProgramService;
  let admin: Session;

  beforeAll(async () => {
    svc = await startTestProgramService({ plugins: PLUGINS, env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, localGateway: new InProcessGatewayLink(gw.gateway.context.interfaces), dataDir: mkdtempSync(join(tmpdir(), 'programs-trace-')) });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
  }, 60_000);
  afterAll(() => svc?.stop());

  const post = (path: string, body?: unknown) => svc.request('POST', path, { cookie: admin.cookie, headers: admin.headers, ...(body !== undefined ? { body } : {}) });
  const get = (path: string) => svc.request('GET', path, { cookie: admin.cookie });

  it('a batch to two machines through the in-process link: one trace with the batch span, a transfer span per machine with its steps, the gateway\'s interface calls under them', async () => {
    const lib = await post('/api/v1/libraries', { name: 'Traced', approvalPolicy: { mode: 'autoRelease' } });
    const programId = (await post('/api/v1/programs', { libraryId: lib.body.id, name: 'O4100', controller: 'fanuc' })).body.id;
    const v1 = await post(`/api/v1/programs/${programId}/versions`, { contentBase64: Buffer.from('%\nO4100 (TRACED)\nG90\nM30\n%\n').toString('base64'), notes: '' });
    const version = (await post(`/api/v1/versions/${v1.body.id}/submit`)).body.version;
    const groupId = (await get('/api/v1/machine-groups')).body.items.find((g: { name: string }) => g.name === 'Pair').id;
    const assignment = (await post('/api/v1/machine-assignments', { programId, groupId, dir: DIR })).body.id;
    exporter.reset();

    const res = await post('/api/v1/deployments', { versionId: version.id, assignmentIds: [assignment], isTrial: false, trialHours: null });
    expect(res.status).toBe(201);
    await spansUntil(() => named('deployment transfer').length === 2, 'two transfer spans');

    const [batch] = named('deployment batch');
    expect(batch).toBeDefined();
    const trace = batch!.spanContext().traceId;
    const inTrace = spans().filter((s) => s.spanContext().traceId === trace);
    // The request's server span is the batch's parent: the caller's traceresponse leads to the batch's trace.
    const request = inTrace.find((s) => s.name === 'POST /api/v1/deployments');
    expect(request).toBeDefined();
    expect(batch!.parentSpanContext?.spanId).toBe(idOf(request!));
    expect(batch!.attributes).toMatchObject({ 'cncgw.deployment.batch.id': res.body.batchId, 'cncgw.machines': 2, 'cncgw.deployment.purpose': 'deploy' });
    expect(service(batch!)).toBe('cncgw-programs');

    const transfers = named('deployment transfer');
    expect(transfers.map((t) => t.spanContext().traceId)).toEqual([trace, trace]);
    expect(transfers.map((t) => t.attributes['cncgw.machine.id']).sort()).toEqual(['T1', 'T2']);
    expect(transfers.map((t) => t.attributes['cncgw.deployment.id']).sort()).toEqual(res.body.deployments.map((d: { id: string }) => d.id).sort());
    for (const transfer of transfers) {
      expect(transfer.parentSpanContext?.spanId).toBe(idOf(batch!));
      expect(transfer.attributes).toMatchObject({ 'cncgw.outcome': 'Succeeded', 'cncgw.deployment.resumed': false });
      expect(service(transfer)).toBe('cncgw-programs');
      const steps = childrenOf(transfer);
      expect(steps.map((s) => s.name)).toEqual(['deployment upload', 'deployment verify']);
      for (const step of steps) {
        expect(service(step)).toBe('cncgw-programs');
        // The gateway's interface call, in its own service, under the step.
        const calls = childrenOf(step);
        expect(calls.map((c) => [service(c), c.attributes['cncgw.interface'], c.attributes['cncgw.machine.id']])).toEqual([
          ['cncgw-gateway', step.name === 'deployment upload' ? '/api/file/program/upload' : '/api/file/program/download', transfer.attributes['cncgw.machine.id']],
        ]);
      }
    }
    // Nothing of the batch outside its trace, and no program contents in any span.
    expect(spans().filter((s) => s.name.startsWith('deployment')).every((s) => s.spanContext().traceId === trace)).toBe(true);
    expect(JSON.stringify(spans().map((s) => s.attributes))).not.toContain('TRACED');
  }, 60_000);
});

describe('a deployment taken over by another instance', () => {
  it('continues the trace stored with its batch: its transfer span under the batch span, a read-back before the upload', async () => {
    const fleet: FleetMachine[] = [{ id: 'mch_t3', gatewayId: 'gw_1', machineId: 'T3', name: 'T3', driver: 'simulator', system: 'FANUC', model: '0i-MF', present: true, programDir: DIR, transformProfile: null }];
    const link = new InProcessGatewayLink(gw.gateway.context.interfaces);
    const database = await engine.fresh();
    const a = await deploymentInstance(database, 'trace-instance-a', fleet, () => link, { leaseMs: 60_000, takeOverAtStart: false });
    const b = await deploymentInstance(database, 'trace-instance-b', fleet, () => link, { leaseMs: 60_000, takeOverAtStart: false });
    const content = Buffer.from('%\nO4200 (TAKEN OVER)\nM30\n%\n');
    // Instance A stores the batch under its span and had opened its transfer (counted) when it stopped; its lease then ends.
    const span = inRole('programs', () => startBatchSpan('bat_t1', { 'cncgw.machines': 1 }));
    expect(span.carrier?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    await a.db.write(async (tx) => {
      await a.repo.insertBatch(tx, { ...batchOf('bat_t1', null, Date.now()), trace: span.carrier }, [{ id: 'dep_t1', assignmentId: 'asg_1', machineId: 'mch_t3', gatewayId: 'gw_1', dir: DIR, fileName: 'O4200', content, sha256: sha(content) }], DEPLOYMENT_MACHINE_VERSION);
      await tx.run('UPDATE deploy_deployments SET lease_until = 0, transfers = 1');
    }, { transaction: true });
    span.end();
    expect((await b.repo.get('dep_t1'))?.trace).toEqual(span.carrier);

    expect(await b.runner.resumeAll()).toBe(1);
    await spansUntil(() => named('deployment transfer').length === 1, 'the transfer span');
    await b.runner.stop();
    await Promise.all([a.db.close(), b.db.close()]);

    const [batch] = named('deployment batch');
    const [transfer] = named('deployment transfer');
    expect(transfer!.spanContext().traceId).toBe(batch!.spanContext().traceId);
    expect(transfer!.parentSpanContext?.spanId).toBe(idOf(batch!));
    expect(transfer!.attributes).toMatchObject({ 'cncgw.outcome': 'Succeeded', 'cncgw.deployment.resumed': true, 'cncgw.lease.epoch': 2 });
    const steps = childrenOf(transfer!);
    expect(steps.map((s) => s.name)).toEqual(['deployment read-back', 'deployment upload', 'deployment verify']);
    for (const step of steps) expect(childrenOf(step).map(service)).toEqual(['cncgw-gateway']);
  }, 60_000);
});
