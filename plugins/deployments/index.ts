/**
 * Deployments: a released version to the machines of some assignments, one
 * persisted XState actor per machine (queued → transferring → verifying →
 * Succeeded or Failed), transfer and SHA-256 read-back through the machine's
 * gateway, retries of transient failures until a deadline, resumed after a
 * restart. docs/programs-deployments.md.
 */
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { definePlugin } from '../../core/plugin-host.js';
import { defineOperation, type RestOperation, type RestPrincipal } from '../../core/rest/operation.js';
import { decodeCursor, encodeCursor, pageOf, pageQueryShape } from '../../core/rest/paging.js';
import { ProblemError } from '../../core/rest/problem.js';
import type { ProgramsContext } from '../../core/roles/programs-context.js';
import { DEPLOYMENT_MACHINE_VERSION, DEPLOYMENT_STATUSES } from './machine.js';
import { DeploymentRunner } from './runner.js';
import { DeploymentRepository, MIGRATIONS, type DeploymentRow, type NewDeployment } from './store.js';

/** Transient failures are retried until this long after the request. */
export const DEPLOYMENT_DEADLINE_MS = 10 * 60_000;
/** Assignments in one request. */
const MAX_ASSIGNMENTS = 100;
/** Machines in one batch, after groups are expanded. */
const MAX_MACHINES = 1000;

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
const idOf = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[0-9a-f]{16}$`), `an id such as ${prefix}_0123456789abcdef`);
const statusSchema = z.enum(DEPLOYMENT_STATUSES);

const deploymentView = z.object({
  id: z.string(), batchId: z.string(), assignmentId: z.string(), machineId: z.string(), gatewayId: z.string(), versionId: z.string(),
  dir: z.string(), fileName: z.string(), sha256: z.string().describe('SHA-256 of the transformed content sent.'), size: z.number().int(),
  status: statusSchema, reason: z.string().nullable().describe('Why it failed, or the last transient failure while retrying.'),
  transfers: z.number().int(), readBackSha256: z.string().nullable().describe('SHA-256 of the file read back from the machine.'),
  timeline: z.array(z.object({ status: statusSchema, at: z.string(), reason: z.string().optional() })),
  createdBy: z.string(), createdAt: z.string(), updatedAt: z.string(), finishedAt: z.string().nullable(),
});
const batchAnswer = z.object({
  batchId: z.string(),
  deployments: z.array(z.object({ id: z.string(), assignmentId: z.string(), machineId: z.string() })).describe('One deployment per machine.'),
});

const out = (r: DeploymentRow): z.infer<typeof deploymentView> => ({
  id: r.id, batchId: r.batchId, assignmentId: r.assignmentId, machineId: r.machineId, gatewayId: r.gatewayId, versionId: r.versionId, dir: r.dir, fileName: r.fileName,
  sha256: r.sha256, size: r.size, status: r.status, reason: r.reason, transfers: r.transfers, readBackSha256: r.readBackSha256,
  timeline: r.timeline.map((t) => ({ status: t.status, at: iso(t.at) as string, ...(t.reason ? { reason: t.reason } : {}) })),
  createdBy: r.createdBy, createdAt: iso(r.createdAt) as string, updatedAt: iso(r.updatedAt) as string, finishedAt: iso(r.finishedAt),
});
const principalOf = (p: RestPrincipal | null): RestPrincipal => {
  if (!p) throw new ProblemError('unauthenticated', 'sign in first');
  return p;
};
const newId = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;

function operations(ctx: ProgramsContext, repo: DeploymentRepository, runner: DeploymentRunner): RestOperation[] {
  const vault = () => ctx.services.get('vault.versions');
  const fleet = () => ctx.services.get('fleet.machines');
  const assignments = () => ctx.services.get('assignments');
  const visible = async (p: RestPrincipal, r: DeploymentRow) => Boolean(await fleet().machine(r.machineId, p));

  const ops = [
    defineOperation({
      operationId: 'createDeployment', method: 'POST', path: '/deployments', summary: 'Deploy a published version to the machines of assignments: a batch id and one deployment per machine', tags: ['deployments'],
      permission: 'deployments.create', highRisk: true,
      description: 'Send Idempotency-Key to make a retry safe: the same key with the same body answers the first answer; with another body it is 422.',
      body: z.object({
        versionId: idOf('ver'), assignmentIds: z.array(idOf('asg')).min(1).max(MAX_ASSIGNMENTS),
        isTrial: z.boolean().default(false), trialHours: z.number().positive().max(24 * 30).nullable().default(null),
      }).strict(),
      responses: { 201: { description: 'Queued; poll GET /deployments/{id}.', schema: batchAnswer } },
      handler: async ({ body }, { principal, request }) => {
        const p = principalOf(principal);
        const keyHeader = request.headers['idempotency-key'];
        const key = typeof keyHeader === 'string' ? keyHeader : undefined;
        if (key !== undefined && !/^[\x21-\x7e]{1,128}$/.test(key)) {
          throw new ProblemError('invalid-request', 'header Idempotency-Key: 1..128 printable characters', { errors: [{ field: 'header.idempotency-key', message: 'not a key', accepted: '1..128 printable ASCII characters' }] });
        }
        const requestHash = createHash('sha256').update(JSON.stringify([p.id, body])).digest('hex');
        if (key !== undefined) {
          const earlier = await repo.batchByKey(`${p.id}:${key}`);
          if (earlier) {
            if (earlier.requestHash !== requestHash) {
              throw new ProblemError('unacceptable', 'this Idempotency-Key was used with another request; use a new key', { errors: [{ field: 'header.idempotency-key', message: 'used with another body' }] });
            }
            return { status: 201, body: JSON.parse(earlier.answer) as z.infer<typeof batchAnswer> };
          }
        }
        if (body.isTrial) throw new ProblemError('unacceptable', 'trials are not available in this version of the service; deploy with isTrial false', { errors: [{ field: 'body.isTrial', message: 'not available yet', accepted: 'false' }] });
        const version = await vault().version(body.versionId, p);
        if (!version) throw new ProblemError('not-found', `no version ${body.versionId}`, { errors: [{ field: 'body.versionId', message: 'no such version' }] });
        if (version.state !== 'published') {
          throw new ProblemError('state-conflict', `version ${version.number} of ${version.program.name} is ${version.state}; only a published version is deployed`, { extensions: { state: version.state } });
        }
        const now = ctx.now();
        const planned: NewDeployment[] = [];
        const seen = new Set<string>();
        // Machines that get the same file share one Buffer (the transform is made once): hash it once.
        const hashes = new WeakMap<Buffer, string>();
        for (const [i, assignmentId] of body.assignmentIds.entries()) {
          const field = `body.assignmentIds[${i}]`;
          const a = await assignments().assignment(assignmentId, p);
          if (!a) throw new ProblemError('not-found', `no assignment ${assignmentId}`, { errors: [{ field, message: 'no such assignment' }] });
          if (a.programId !== version.program.id) {
            throw new ProblemError('unacceptable', `assignment ${assignmentId} is for another program than version ${version.id}`, { errors: [{ field, message: 'assigns another program' }] });
          }
          const machineIds = a.targetKind === 'machine' ? [a.targetId] : ((await fleet().group(a.targetId, p))?.machineIds ?? []);
          for (const machineId of machineIds) {
            const machine = await fleet().machine(machineId, p);
            if (!machine) throw new ProblemError('not-found', `no machine ${machineId}`, { errors: [{ field, message: `its machine ${machineId} is not visible` }] });
            if (!machine.present || seen.has(machine.id)) continue;
            seen.add(machine.id);
            let file;
            try {
              file = await assignments().materialize(a.id, version, machine, now);
            } catch (err) {
              throw new ProblemError('unacceptable', `assignment ${a.id} for machine ${machine.machineId}: ${(err as Error).message}`, { errors: [{ field, message: (err as Error).message.slice(0, 300) }] });
            }
            let sha256 = hashes.get(file.content);
            if (!sha256) hashes.set(file.content, (sha256 = createHash('sha256').update(file.content).digest('hex')));
            planned.push({ id: newId('dep'), assignmentId: a.id, machineId: machine.id, gatewayId: machine.gatewayId, dir: file.dir, fileName: file.fileName, content: file.content, sha256 });
          }
        }
        if (planned.length === 0) throw new ProblemError('unacceptable', 'the assignments name no machine that its gateway still lists', { errors: [{ field: 'body.assignmentIds', message: 'no machine to deploy to' }] });
        if (planned.length > MAX_MACHINES) throw new ProblemError('unacceptable', `a batch deploys to at most ${MAX_MACHINES} machines; this one names ${planned.length}`, { errors: [{ field: 'body.assignmentIds', message: 'too many machines' }] });
        const batchId = newId('bat');
        const answer = { batchId, deployments: planned.map((d) => ({ id: d.id, assignmentId: d.assignmentId, machineId: d.machineId })) };
        await ctx.db.write(async (tx) => {
          await repo.insertBatch(tx, {
            id: batchId, versionId: version.id, isTrial: body.isTrial, trialHours: body.trialHours, key: key !== undefined ? `${p.id}:${key}` : null, requestHash,
            answer: JSON.stringify(answer), createdBy: p.name, createdAt: now, deadline: now + DEPLOYMENT_DEADLINE_MS,
          }, planned, DEPLOYMENT_MACHINE_VERSION);
          await ctx.audit.append(tx, {
            principalName: p.name, onBehalfOf: p.onBehalfOf, authMethod: p.authMethod, category: 'deployment', action: 'deployment.create', entityType: 'batch', entityId: batchId,
            details: { versionId: version.id, sha256: version.sha256, deployments: planned.length, machines: planned.slice(0, 100).map((d) => d.machineId) },
          });
        }, { transaction: true });
        for (const d of planned) runner.start(d.id, now + DEPLOYMENT_DEADLINE_MS);
        return { status: 201, body: answer, headers: { location: `/api/v1/deployments?batchId=${batchId}` } };
      },
    }),
    defineOperation({
      operationId: 'listDeployments', method: 'GET', path: '/deployments', summary: 'Deployments, newest first; filter by batch, status, machine and time', tags: ['deployments'], permission: 'deployments.read',
      query: z.object({
        ...pageQueryShape, batchId: idOf('bat').optional(), status: statusSchema.optional(), machineId: idOf('mch').optional(),
        from: z.iso.datetime({ offset: true }).optional().describe('Created at or after (ISO instant).'), to: z.iso.datetime({ offset: true }).optional().describe('Created before (ISO instant).'),
      }),
      responses: { 200: { description: 'A page of deployments.', schema: pageOf(deploymentView) } },
      handler: async ({ query }, { principal }) => {
        const p = principalOf(principal);
        const cursor = query.cursor ? decodeCursor(query.cursor, { createdAt: 'number', id: 'string' }) : null;
        const rows = await repo.list(
          { ...(query.batchId ? { batchId: query.batchId } : {}), ...(query.status ? { status: query.status } : {}), ...(query.machineId ? { machineId: query.machineId } : {}),
            ...(query.from ? { from: Date.parse(query.from) } : {}), ...(query.to ? { to: Date.parse(query.to) } : {}) },
          query.limit + 1, cursor ? { createdAt: Number(cursor.createdAt), id: String(cursor.id) } : null,
        );
        const pageRows = rows.slice(0, query.limit);
        const items: DeploymentRow[] = [];
        for (const r of pageRows) if (await visible(p, r)) items.push(r);
        const last = pageRows[pageRows.length - 1];
        return { status: 200, body: { items: items.map(out), nextCursor: rows.length > query.limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null } };
      },
    }),
    defineOperation({
      operationId: 'getDeployment', method: 'GET', path: '/deployments/{id}', summary: 'One deployment: status, timeline, hashes, reason', tags: ['deployments'], permission: 'deployments.read',
      params: z.object({ id: idOf('dep') }), responses: { 200: { description: 'The deployment.', schema: deploymentView } },
      handler: async ({ params }, { principal }) => {
        const row = await repo.get(params.id);
        if (!row || !(await visible(principalOf(principal), row))) throw new ProblemError('not-found', `no deployment ${params.id}`);
        return { status: 200, body: out(row) };
      },
    }),
  ];
  return ops as unknown as RestOperation[];
}

export const deploymentsPlugin = definePlugin<ProgramsContext>({
  name: 'deployments',
  dependsOn: ['vault', 'gateways', 'assignments', 'webhooks'],
  migrations: MIGRATIONS,
  async register(ctx) {
    const outbox = ctx.services.get('webhooks.outbox');
    const repo = new DeploymentRepository(ctx.db, ctx.audit, outbox);
    const runner = new DeploymentRunner(ctx, repo, ctx.logger, () => outbox.kick());
    for (const op of operations(ctx, repo, runner)) ctx.rest.define(op);
    const resumed = await runner.resumeAll();
    if (resumed) ctx.logger.info({ deployments: resumed }, 'unfinished deployments resumed');
    return { stop: () => runner.stop() };
  },
});
