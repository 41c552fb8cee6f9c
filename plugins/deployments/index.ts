/**
 * Deployments: a released version to the machines of some assignments, one
 * persisted XState actor per machine (queued → transferring → verifying →
 * Succeeded or Failed), transfer and SHA-256 read-back through the machine's
 * gateway, retries of transient failures until a deadline, resumed after a
 * restart. docs/programs-deployments.md.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { definePlugin } from '../../core/plugin-host.js';
import { defineOperation, type AnyRestOperation, type RestPrincipal } from '../../core/rest/operation.js';
import { decodeCursor, encodeCursor, pageOf, pageQueryShape } from '../../core/rest/paging.js';
import { ProblemError } from '../../core/rest/problem.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';
import type { GatewayLink } from '../../core/gateway-link/types.js';
import type { WriteTx } from '../../core/store/database.js';
import { idOf, iso, newId, principalOf, SYSTEM } from './common.js';
import { DEPLOYMENT_MACHINE_VERSION, DEPLOYMENT_STATUSES } from './machine.js';
import { DeploymentRunner, type FleetMachine } from './runner.js';
import type { DeploymentOutcome, DeploymentsService, ExpectedFile, RecentDeployment } from './service.js';
import { DEPLOYMENT_PURPOSES, DeploymentRepository, MIGRATIONS, type DeploymentPurpose, type DeploymentRow, type NewDeployment } from './store.js';
import { TRIAL_MACHINE_VERSION } from './trial-machine.js';
import { TrialRunner } from './trial-runner.js';
import { TRIAL_MIGRATIONS, TrialRepository, type NewTrial } from './trial-store.js';
import { trialOperations } from './trials.js';
import { trialRulesSchema, type TrialRulesInput } from './trial-verdict.js';
import { refuseUntakeable, type DeploymentTarget } from './takers.js';

/** Transient failures are retried until this long after the request. */
export const DEPLOYMENT_DEADLINE_MS = 10 * 60_000;
/** Assignments in one request. */
const MAX_ASSIGNMENTS = 100;
/** Machines in one batch, after groups are expanded. */
const MAX_MACHINES = 1000;
/** A trial's length when the request gives none. */
export const DEFAULT_TRIAL_HOURS = 24;

const statusSchema = z.enum(DEPLOYMENT_STATUSES);

const deploymentView = z.object({
  id: z.string(), batchId: z.string(), assignmentId: z.string().nullable(), machineId: z.string(), gatewayId: z.string(),
  versionId: z.string().nullable().describe('Null for a restored snapshot (content that is no version).'),
  purpose: z.enum(DEPLOYMENT_PURPOSES).describe('deploy (a release), trial, or the service putting a file back: pull-back, drift-reject, restore.'),
  dir: z.string(), fileName: z.string(), sha256: z.string().describe('SHA-256 of the transformed content sent.'), size: z.number().int(),
  status: statusSchema, reason: z.string().nullable().describe('Why it failed, or the last transient failure while retrying.'),
  transfers: z.number().int(), readBackSha256: z.string().nullable().describe('SHA-256 of the file read back from the machine.'),
  timeline: z.array(z.object({ status: statusSchema, at: z.string(), reason: z.string().optional() })),
  createdBy: z.string(), createdAt: z.string(), updatedAt: z.string(), finishedAt: z.string().nullable(),
});
const batchAnswer = z.object({
  batchId: z.string(),
  deployments: z.array(z.object({ id: z.string(), assignmentId: z.string(), machineId: z.string(), trialId: z.string().optional().describe('With isTrial: the trial that follows this deployment.') })).describe('One deployment per machine.'),
});

const out = (r: DeploymentRow): z.infer<typeof deploymentView> => ({
  id: r.id, batchId: r.batchId, assignmentId: r.assignmentId, machineId: r.machineId, gatewayId: r.gatewayId, versionId: r.versionId, purpose: r.purpose, dir: r.dir, fileName: r.fileName,
  sha256: r.sha256, size: r.size, status: r.status, reason: r.reason, transfers: r.transfers, readBackSha256: r.readBackSha256,
  timeline: r.timeline.map((t) => ({ status: t.status, at: iso(t.at) as string, ...(t.reason ? { reason: t.reason } : {}) })),
  createdBy: r.createdBy, createdAt: iso(r.createdAt) as string, updatedAt: iso(r.updatedAt) as string, finishedAt: iso(r.finishedAt),
});

/** Inserts a batch with its deployments (and trials) and its audit record in one transaction, then starts the actors. */
export interface BatchStarter {
  (batch: {
    versionId: string | null; purpose: DeploymentPurpose; isTrial: boolean; trialHours: number | null; key: string | null; requestHash: string; createdBy: Pick<RestPrincipal, 'name' | 'onBehalfOf' | 'authMethod'>;
    planned: NewDeployment[]; trials?: Omit<NewTrial, 'batchId' | 'createdBy' | 'createdAt'>[]; answer: (batchId: string) => unknown; audit: Record<string, unknown>;
    inTx?: (tx: WriteTx, batchId: string) => Promise<void>;
  }): Promise<{ batchId: string; answer: unknown }>;
}

function operations(ctx: ProgramsContext, repo: DeploymentRepository, startBatch: BatchStarter, trialDefaults: TrialRulesInput): AnyRestOperation[] {
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
        isTrial: z.boolean().default(false), trialHours: z.number().positive().max(24 * 30).nullable().default(null).describe(`How long a trial is watched; null: ${DEFAULT_TRIAL_HOURS} h.`),
        trialRules: trialRulesSchema.partial().optional().describe('With isTrial: rules that replace the service\'s defaults for these trials (docs/programs-trials.md).'),
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
        if (!body.isTrial && (body.trialHours !== null || body.trialRules !== undefined)) {
          throw new ProblemError('unacceptable', 'trialHours and trialRules go with isTrial true', { errors: [{ field: body.trialHours !== null ? 'body.trialHours' : 'body.trialRules', message: 'only for a trial', accepted: 'null when isTrial is false' }] });
        }
        const version = await vault().version(body.versionId, p);
        if (!version) throw new ProblemError('not-found', `no version ${body.versionId}`, { errors: [{ field: 'body.versionId', message: 'no such version' }] });
        if (version.state !== 'published') {
          throw new ProblemError('state-conflict', `version ${version.number} of ${version.program.name} is ${version.state}; only a published version is deployed`, { extensions: { state: version.state } });
        }
        const now = ctx.now();
        const planned: NewDeployment[] = [];
        const targets: DeploymentTarget[] = [];
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
          const found = new Map((await fleet().machines(machineIds, p)).map((m) => [m.id, m]));
          for (const machineId of machineIds) {
            const machine = found.get(machineId);
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
            targets.push({ field, machine, gatewayId: machine.gatewayId, machineId: machine.machineId, content: file.content });
          }
        }
        await refuseUntakeable(targets, (t) => fleet().linkFor(t.machine), `version ${version.number} of ${version.program.name}`);
        const rules = trialRulesSchema.parse({ ...trialDefaults, ...(body.trialRules ?? {}) });
        const trials = body.isTrial
          ? await Promise.all(planned.map(async (d) => {
            const previous = await repo.release(d.assignmentId as string, d.machineId);
            return {
              id: newId('trl'), deploymentId: d.id, assignmentId: d.assignmentId as string, machineId: d.machineId, versionId: version.id, dir: d.dir, fileName: d.fileName,
              previous: previous ? { versionId: previous.versionId, sha256: previous.sha256, dir: previous.dir, fileName: previous.fileName } : null,
              rules, trialHours: body.trialHours ?? DEFAULT_TRIAL_HOURS,
            };
          }))
          : undefined;
        if (planned.length === 0) throw new ProblemError('unacceptable', 'the assignments name no machine that its gateway still lists', { errors: [{ field: 'body.assignmentIds', message: 'no machine to deploy to' }] });
        if (planned.length > MAX_MACHINES) throw new ProblemError('unacceptable', `a batch deploys to at most ${MAX_MACHINES} machines; this one names ${planned.length}`, { errors: [{ field: 'body.assignmentIds', message: 'too many machines' }] });
        const trialOf = new Map(trials?.map((t) => [t.deploymentId, t.id]));
        const { batchId, answer } = await startBatch({
          versionId: version.id, purpose: body.isTrial ? 'trial' : 'deploy', isTrial: body.isTrial, trialHours: body.trialHours, key: key !== undefined ? `${p.id}:${key}` : null, requestHash,
          createdBy: p, planned, ...(trials ? { trials } : {}),
          answer: (id) => ({ batchId: id, deployments: planned.map((d) => ({ id: d.id, assignmentId: d.assignmentId as string, machineId: d.machineId, ...(trialOf.has(d.id) ? { trialId: trialOf.get(d.id) } : {}) })) }),
          audit: { versionId: version.id, sha256: version.sha256, isTrial: body.isTrial, ...(trials ? { trialHours: body.trialHours ?? DEFAULT_TRIAL_HOURS, trialRules: rules } : {}) },
        });
        return { status: 201, body: answer as z.infer<typeof batchAnswer>, headers: { location: `/api/v1/deployments?batchId=${batchId}` } };
      },
    }),
    defineOperation({
      operationId: 'listDeployments', method: 'GET', path: '/deployments', summary: 'Deployments, newest first; filter by batch, status, machine and time', tags: ['deployments'], permission: 'deployments.read',
      query: z.object({
        ...pageQueryShape, batchId: idOf('bat').optional(), status: statusSchema.optional(), machineId: idOf('mch').optional(), purpose: z.enum(DEPLOYMENT_PURPOSES).optional(),
        from: z.iso.datetime({ offset: true }).optional().describe('Created at or after (ISO instant).'), to: z.iso.datetime({ offset: true }).optional().describe('Created before (ISO instant).'),
      }),
      responses: { 200: { description: 'A page of deployments.', schema: pageOf(deploymentView) } },
      handler: async ({ query }, { principal }) => {
        const p = principalOf(principal);
        const cursor = query.cursor ? decodeCursor(query.cursor, { createdAt: 'number', id: 'string' }) : null;
        const rows = await repo.list(
          { ...(query.batchId ? { batchId: query.batchId } : {}), ...(query.status ? { status: query.status } : {}), ...(query.machineId ? { machineId: query.machineId } : {}),
            ...(query.purpose ? { purpose: query.purpose } : {}), ...(query.from ? { from: Date.parse(query.from) } : {}), ...(query.to ? { to: Date.parse(query.to) } : {}) },
          query.limit + 1, cursor ? { createdAt: Number(cursor.createdAt), id: String(cursor.id) } : null,
        );
        const pageRows = rows.slice(0, query.limit);
        const seen = new Set((await fleet().machines([...new Set(pageRows.map((r) => r.machineId))], p)).map((m) => m.id));
        const items = pageRows.filter((r) => seen.has(r.machineId));
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
  return ops as AnyRestOperation[];
}

export interface DeploymentsOptions {
  /** Defaults of every trial's rules (a request's trialRules replace single fields). */
  trialRules?: TrialRulesInput;
}

export function createDeploymentsPlugin(options: DeploymentsOptions = {}) {
  const trialDefaults = trialRulesSchema.parse(options.trialRules ?? {});
  return definePlugin<ProgramsContext>({
    name: 'deployments',
    dependsOn: ['vault', 'gateways', 'assignments', 'webhooks'],
    migrations: [...MIGRATIONS, ...TRIAL_MIGRATIONS],
    async register(ctx) {
      const outbox = ctx.services.get('webhooks.outbox');
      const repo = new DeploymentRepository(ctx.db, ctx.audit, outbox);
      const trialRepo = new TrialRepository(ctx.db);
      // Who waits for a deployment's end (trials, the mirror), told after the final status is stored.
      const waiting = new Map<string, ((o: DeploymentOutcome) => void)[]>();
      const outcomeOf = (r: DeploymentRow): DeploymentOutcome => ({ id: r.id, status: r.status === 'Succeeded' ? 'Succeeded' : 'Failed', reason: r.reason, sha256: r.sha256, readBackSha256: r.readBackSha256 });
      const runner = new DeploymentRunner(ctx, repo, ctx.logger, (row) => {
        outbox.kick();
        for (const resolve of waiting.get(row.id)?.splice(0) ?? []) resolve(outcomeOf(row));
        waiting.delete(row.id);
      });
      const outcome = async (id: string): Promise<DeploymentOutcome> => {
        const promise = new Promise<DeploymentOutcome>((resolve) => {
          const list = waiting.get(id) ?? [];
          list.push(resolve);
          waiting.set(id, list);
        });
        const row = await repo.get(id);
        if (!row) throw new Error(`no deployment ${id}`);
        if (row.finishedAt !== null) {
          waiting.delete(id);
          return outcomeOf(row);
        }
        return promise;
      };
      // Set below; the batch starter starts a batch's trials through it.
      const runners: { trials?: TrialRunner } = {};
      const startBatch: BatchStarter = async (b) => {
        const batchId = newId('bat');
        const answer = b.answer(batchId);
        const now = ctx.now();
        // What the actors' steps need, read once for the batch while it is stored; a deployment whose machine or gateway
        // cannot be had now looks them up itself (and fails with the reason).
        const targets = (async () => {
          const machines = new Map((await fleet().machines([...new Set(b.planned.map((d) => d.machineId))], SYSTEM)).map((m) => [m.id, m]));
          const links = new Map<string, GatewayLink | undefined>();
          for (const m of machines.values()) {
            if (m.present && !links.has(m.gatewayId)) links.set(m.gatewayId, await fleet().linkFor(m).catch(() => undefined));
          }
          return { machines, links };
        })().catch(() => ({ machines: new Map<string, FleetMachine>(), links: new Map<string, GatewayLink | undefined>() }));
        const rows = await ctx.db.write(async (tx) => {
          const inserted = await repo.insertBatch(tx, {
            id: batchId, versionId: b.versionId, purpose: b.purpose, isTrial: b.isTrial, trialHours: b.trialHours, key: b.key, requestHash: b.requestHash,
            answer: JSON.stringify(answer), createdBy: b.createdBy.name, createdAt: now, deadline: now + DEPLOYMENT_DEADLINE_MS,
          }, b.planned, DEPLOYMENT_MACHINE_VERSION);
          for (const t of b.trials ?? []) await trialRepo.insert(tx, { ...t, batchId, createdBy: b.createdBy.name, createdAt: now }, TRIAL_MACHINE_VERSION);
          await b.inTx?.(tx, batchId);
          await ctx.audit.append(tx, {
            principalName: b.createdBy.name, onBehalfOf: b.createdBy.onBehalfOf, authMethod: b.createdBy.authMethod, category: 'deployment', action: 'deployment.create', entityType: 'batch', entityId: batchId,
            ...(b.planned.length === 1 && b.planned[0] ? { machine: b.planned[0].machineId } : {}),
            details: { purpose: b.purpose, deployments: b.planned.length, machines: b.planned.slice(0, 100).map((d) => d.machineId), ...b.audit },
          });
          return inserted;
        }, { transaction: true });
        repo.track(rows);
        const { machines, links } = await targets;
        for (const [i, d] of b.planned.entries()) {
          const machine = machines.get(d.machineId);
          const link = machine?.present ? links.get(machine.gatewayId) : undefined;
          runner.start(d.id, now + DEPLOYMENT_DEADLINE_MS, machine && link ? { row: rows[i] as DeploymentRow, machine, link, content: d.content } : undefined);
        }
        for (const t of b.trials ?? []) runners.trials?.start(t.id);
        return { batchId, answer };
      };
      const fleet = () => ctx.services.get('fleet.machines');
      const direct = async (r: {
        machineId: string; dir: string; fileName: string; content: Buffer; versionId: string | null; assignmentId: string | null; purpose: DeploymentPurpose;
        principal: Pick<RestPrincipal, 'name' | 'onBehalfOf' | 'authMethod'>; details?: Record<string, unknown>; inTx?: (tx: WriteTx, deploymentId: string) => Promise<void>;
      }) => {
        const machine = await fleet().machine(r.machineId, SYSTEM);
        if (!machine) throw new Error(`machine ${r.machineId} is not in the fleet`);
        const id = newId('dep');
        const sha256 = createHash('sha256').update(r.content).digest('hex');
        const { batchId } = await startBatch({
          versionId: r.versionId, purpose: r.purpose, isTrial: false, trialHours: null, key: null, requestHash: sha256, createdBy: r.principal,
          planned: [{ id, assignmentId: r.assignmentId, machineId: machine.id, gatewayId: machine.gatewayId, dir: r.dir, fileName: r.fileName, content: r.content, sha256 }],
          answer: (b) => ({ batchId: b, deployments: [{ id, assignmentId: r.assignmentId, machineId: machine.id }] }),
          audit: { versionId: r.versionId, sha256, fileName: r.fileName, ...(r.details ?? {}) },
          ...(r.inTx ? { inTx: (tx: WriteTx) => r.inTx!(tx, id) } : {}),
        });
        return { deploymentId: id, batchId };
      };
      const trialRunner = new TrialRunner(ctx, trialRepo, repo, {
        outcome,
        outbox,
        deployPullBack: async (t, principal) => {
          const previous = t.previous;
          if (!previous) throw new Error('no earlier release');
          const content = await repo.content(previous.sha256);
          const { deploymentId } = await direct({
            machineId: t.machineId, dir: previous.dir, fileName: previous.fileName, content, versionId: previous.versionId, assignmentId: t.assignmentId, purpose: 'pull-back', principal,
            details: { trialId: t.id },
            inTx: (tx, depId) => trialRepo.setPullBack(tx, t.id, depId),
          });
          return deploymentId;
        },
      }, ctx.logger);
      runners.trials = trialRunner;
      const service: DeploymentsService = {
        deployFile: (r) => direct(r),
        outcome,
        release: (assignmentId, machineId) => repo.release(assignmentId, machineId),
        releasesOn: (machineId) => repo.releasesOn(machineId),
        content: async (sha256) => {
          const c = await repo.content(sha256);
          return c.length > 0 || sha256 === createHash('sha256').update(c).digest('hex') ? c : undefined;
        },
        failedSince: (since) => repo.countFailedSince(since),
        async recent(limit, principal) {
          const out: RecentDeployment[] = [];
          let before: { createdAt: number; id: string } | null = null;
          // Pages until `limit` visible ones are found (or 10 pages were read: a caller with a narrow scope gets fewer).
          for (let page = 0; page < 10 && out.length < limit; page++) {
            const rows = await repo.list({}, 100, before);
            for (const r of rows) {
              if (out.length >= limit) break;
              if (!(await fleet().machine(r.machineId, principal))) continue;
              out.push({ id: r.id, batchId: r.batchId, machineId: r.machineId, versionId: r.versionId, purpose: r.purpose, fileName: r.fileName, status: r.status, reason: r.reason, createdBy: r.createdBy, createdAt: r.createdAt, finishedAt: r.finishedAt });
            }
            const last = rows[rows.length - 1];
            if (rows.length < 100 || !last) break;
            before = { createdAt: last.createdAt, id: last.id };
          }
          return out;
        },
        async expectedOn(machineId) {
          const byAssignment = new Map<string, ExpectedFile>();
          for (const r of await repo.releasesOn(machineId)) {
            byAssignment.set(r.assignmentId, { assignmentId: r.assignmentId, versionId: r.versionId, dir: r.dir, fileName: r.fileName, sha256: r.sha256, source: 'release', deploymentId: r.deploymentId });
          }
          const busy = await repo.unfinishedOn(machineId);
          for (const t of await trialRepo.unfinishedOn(machineId)) {
            const d = t.status === 'Active' && !t.pullBackDeploymentId ? await repo.get(t.deploymentId) : undefined;
            if (d) byAssignment.set(t.assignmentId, { assignmentId: t.assignmentId, versionId: t.versionId, dir: d.dir, fileName: d.fileName, sha256: d.sha256, source: 'trial', deploymentId: d.id });
            else busy.push({ dir: t.dir, fileName: t.fileName });
          }
          return { expected: [...byAssignment.values()], busy };
        },
        activeTrials: () => trialRepo.countActive(),
      };
      ctx.services.provide('deployments', service);
      for (const op of operations(ctx, repo, startBatch, trialDefaults)) ctx.rest.define(op);
      for (const op of trialOperations(ctx, trialRepo, trialRunner)) ctx.rest.define(op);
      const resumed = await runner.resumeAll();
      if (resumed) ctx.logger.info({ deployments: resumed }, 'unfinished deployments resumed');
      const trialsResumed = await trialRunner.resumeAll();
      if (trialsResumed) ctx.logger.info({ trials: trialsResumed }, 'unfinished trials resumed');
      return {
        stop: async () => {
          await trialRunner.stop();
          await runner.stop();
        },
      };
    },
  });
}

export const deploymentsPlugin = createDeploymentsPlugin();
