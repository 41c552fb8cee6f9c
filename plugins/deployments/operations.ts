/**
 * The deployments' operations: deploy a published version to the machines of
 * some assignments (a batch, one deployment per machine, optionally trials),
 * list deployments and read one. docs/programs-deployments.md.
 */
import { z } from 'zod';
import { sha256Hex } from '../../core/values/hash.js';
import { iso, isoOrNull } from '../../core/rest/fields.js';
import { idOf, newId } from '../../core/rest/ids.js';
import { defineOperation, type AnyRestOperation, type RestPrincipal } from '../../core/rest/operation.js';
import { decodeCursor, encodeCursor, pageOf, pageQueryShape } from '../../core/rest/paging.js';
import { principalOf } from '../../core/rest/principal.js';
import { ProblemError } from '../../core/rest/problem.js';
import type { ProgramsContext, ProgramsServices } from '../../core/roles/programs/context.js';
import type { WriteTx } from '../../core/store/database.js';
import { DEPLOYMENT_STATUSES } from './machine.js';
import { TRANSFERS_PER_GATEWAY, type DeploymentRunner } from './runner.js';
import { DEPLOYMENT_PURPOSES, type DeploymentPurpose, type DeploymentRepository, type DeploymentRow, type NewDeployment } from './store.js';
import { refuseUntakeable, type DeploymentTarget } from './takers.js';
import type { NewTrial } from './trial-store.js';
import { trialRulesSchema, type TrialRules, type TrialRulesInput } from './trial-verdict.js';

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
  holder: z.string().nullable().describe('The program-service instance that drives it (host:pid:random; a restarted instance has a new one), or once finished the one that finished it; null until one claims it. Another instance takes it over when this one stops renewing its lease.'),
  waitingForSlot: z.boolean().describe(`Transferring, but waiting for a turn: the service sends at most ${TRANSFERS_PER_GATEWAY} files to one gateway at once, and this one has not started yet.`),
});
const batchAnswer = z.object({
  batchId: z.string(),
  deployments: z.array(z.object({ id: z.string(), assignmentId: z.string(), machineId: z.string(), trialId: z.string().optional().describe('With isTrial: the trial that follows this deployment.') })).describe('One deployment per machine.'),
});

const out = (r: DeploymentRow, waitingForSlot = false): z.infer<typeof deploymentView> => ({
  id: r.id, batchId: r.batchId, assignmentId: r.assignmentId, machineId: r.machineId, gatewayId: r.gatewayId, versionId: r.versionId, purpose: r.purpose, dir: r.dir, fileName: r.fileName,
  sha256: r.sha256, size: r.size, status: r.status, reason: r.reason, transfers: r.transfers, readBackSha256: r.readBackSha256,
  timeline: r.timeline.map((t) => ({ status: t.status, at: iso(t.at), ...(t.reason ? { reason: t.reason } : {}) })),
  createdBy: r.createdBy, createdAt: iso(r.createdAt), updatedAt: iso(r.updatedAt), finishedAt: isoOrNull(r.finishedAt), holder: r.holder,
  waitingForSlot: r.status === 'Transferring' && waitingForSlot,
});

/** Inserts a batch with its deployments (and trials) and its audit record in one transaction, then starts the actors. */
export interface BatchStarter {
  (batch: {
    versionId: string | null; purpose: DeploymentPurpose; isTrial: boolean; trialHours: number | null; key: string | null; requestHash: string; createdBy: Pick<RestPrincipal, 'name' | 'onBehalfOf' | 'authMethod'>;
    planned: NewDeployment[]; trials?: Omit<NewTrial, 'batchId' | 'createdBy' | 'createdAt'>[]; answer: (batchId: string) => unknown; audit: Record<string, unknown>;
    inTx?: (tx: WriteTx, batchId: string) => Promise<void>;
  }): Promise<{ batchId: string; answer: unknown }>;
}

type Version = NonNullable<Awaited<ReturnType<ProgramsServices['vault.versions']['version']>>>;

/** The answer of the batch stored earlier under the same Idempotency-Key, or 422 when the key came with another request. */
export function earlierAnswer(earlier: { requestHash: string; answer: string }, requestHash: string): unknown {
  if (earlier.requestHash !== requestHash) {
    throw new ProblemError('unacceptable', 'this Idempotency-Key was used with another request; use a new key', { errors: [{ field: 'header.idempotency-key', message: 'used with another body' }] });
  }
  return JSON.parse(earlier.answer);
}

/** The Idempotency-Key header, checked; undefined when none was sent. */
function idempotencyKey(header: string | string[] | undefined): string | undefined {
  const key = typeof header === 'string' ? header : undefined;
  if (key !== undefined && !/^[\x21-\x7e]{1,128}$/.test(key)) {
    throw new ProblemError('invalid-request', 'header Idempotency-Key: 1..128 printable characters', { errors: [{ field: 'header.idempotency-key', message: 'not a key', accepted: '1..128 printable ASCII characters' }] });
  }
  return key;
}

/** The deployment of each machine the assignments name (once per machine, the file transformed for it), and the targets to check. */
async function planMachines(ctx: ProgramsContext, p: RestPrincipal, version: Version, assignmentIds: readonly string[], now: number): Promise<{ planned: NewDeployment[]; targets: DeploymentTarget[] }> {
  const fleet = ctx.services.get('gateway-machines');
  const assignments = ctx.services.get('assignments');
  const planned: NewDeployment[] = [];
  const targets: DeploymentTarget[] = [];
  const seen = new Set<string>();
  // Machines that get the same file share one Buffer (the transform is made once): hash it once.
  const hashes = new WeakMap<Buffer, string>();
  for (const [i, assignmentId] of assignmentIds.entries()) {
    const field = `body.assignmentIds[${i}]`;
    const a = await assignments.assignment(assignmentId, p);
    if (!a) throw new ProblemError('not-found', `no assignment ${assignmentId}`, { errors: [{ field, message: 'no such assignment' }] });
    if (a.programId !== version.program.id) {
      throw new ProblemError('unacceptable', `assignment ${assignmentId} is for another program than version ${version.id}`, { errors: [{ field, message: 'assigns another program' }] });
    }
    const machineIds = a.targetKind === 'machine' ? [a.targetId] : ((await fleet.group(a.targetId, p))?.machineIds ?? []);
    const found = new Map((await fleet.machines(machineIds, p)).map((m) => [m.id, m]));
    for (const machineId of machineIds) {
      const machine = found.get(machineId);
      if (!machine) throw new ProblemError('not-found', `no machine ${machineId}`, { errors: [{ field, message: `its machine ${machineId} is not visible` }] });
      if (!machine.present || seen.has(machine.id)) continue;
      seen.add(machine.id);
      let file;
      try {
        file = await assignments.materialize(a.id, version, machine, now);
      } catch (err) {
        throw new ProblemError('unacceptable', `assignment ${a.id} for machine ${machine.machineId}: ${(err as Error).message}`, { errors: [{ field, message: (err as Error).message.slice(0, 300) }] });
      }
      let sha256 = hashes.get(file.content);
      if (!sha256) hashes.set(file.content, (sha256 = sha256Hex(file.content)));
      planned.push({ id: newId('dep'), assignmentId: a.id, machineId: machine.id, gatewayId: machine.gatewayId, dir: file.dir, fileName: file.fileName, content: file.content, sha256 });
      targets.push({ field, machine, gatewayId: machine.gatewayId, machineId: machine.machineId, content: file.content });
    }
  }
  return { planned, targets };
}

/** 422 for a batch without a machine or with more than a batch takes. */
function checkCount(planned: readonly NewDeployment[]): void {
  if (planned.length === 0) throw new ProblemError('unacceptable', 'the assignments name no machine that its gateway still lists', { errors: [{ field: 'body.assignmentIds', message: 'no machine to deploy to' }] });
  if (planned.length > MAX_MACHINES) throw new ProblemError('unacceptable', `a batch deploys to at most ${MAX_MACHINES} machines; this one names ${planned.length}`, { errors: [{ field: 'body.assignmentIds', message: 'too many machines' }] });
}

/** The trial of each planned deployment, with the release before it (what a pull-back puts back). */
function planTrials(repo: DeploymentRepository, planned: readonly NewDeployment[], versionId: string, rules: TrialRules, trialHours: number): Promise<Omit<NewTrial, 'batchId' | 'createdBy' | 'createdAt'>[]> {
  return Promise.all(planned.map(async (d) => {
    const previous = await repo.release(d.assignmentId as string, d.machineId);
    return {
      id: newId('trl'), deploymentId: d.id, assignmentId: d.assignmentId as string, machineId: d.machineId, versionId, dir: d.dir, fileName: d.fileName,
      previous: previous ? { versionId: previous.versionId, sha256: previous.sha256, dir: previous.dir, fileName: previous.fileName } : null,
      rules, trialHours,
    };
  }));
}

const createBody = z.object({
  versionId: idOf('ver'), assignmentIds: z.array(idOf('asg')).min(1).max(MAX_ASSIGNMENTS),
  isTrial: z.boolean().default(false), trialHours: z.number().positive().max(24 * 30).nullable().default(null).describe(`How long a trial is watched; null: ${DEFAULT_TRIAL_HOURS} h.`),
  trialRules: trialRulesSchema.partial().optional().describe('With isTrial: rules that replace the service\'s defaults for these trials (docs/programs-trials.md).'),
}).strict();

/** Checks a create request's version and trial fields; the published version. */
async function checkCreate(ctx: ProgramsContext, p: RestPrincipal, body: z.output<typeof createBody>): Promise<Version> {
  if (!body.isTrial && (body.trialHours !== null || body.trialRules !== undefined)) {
    throw new ProblemError('unacceptable', 'trialHours and trialRules go with isTrial true', { errors: [{ field: body.trialHours !== null ? 'body.trialHours' : 'body.trialRules', message: 'only for a trial', accepted: 'null when isTrial is false' }] });
  }
  const version = await ctx.services.get('vault.versions').version(body.versionId, p);
  if (!version) throw new ProblemError('not-found', `no version ${body.versionId}`, { errors: [{ field: 'body.versionId', message: 'no such version' }] });
  if (version.state !== 'published') {
    throw new ProblemError('state-conflict', `version ${version.number} of ${version.program.name} is ${version.state}; only a published version is deployed`, { extensions: { state: version.state } });
  }
  return version;
}

/** What the deployments' operations share. */
interface DeploymentDeps {
  ctx: ProgramsContext;
  repo: DeploymentRepository;
  startBatch: BatchStarter;
  trialDefaults: TrialRulesInput;
  fleet(): ProgramsServices['gateway-machines'];
  visible(p: RestPrincipal, r: DeploymentRow): Promise<boolean>;
  /** Whether a deployment this process runs waits for a transfer slot of its gateway. */
  waitingForSlot(deploymentId: string): boolean;
}

const DEPLOYMENT_OPERATIONS: readonly ((d: DeploymentDeps) => AnyRestOperation)[] = [
  ({ ctx, repo, startBatch, trialDefaults, fleet }) => defineOperation({
    operationId: 'createDeployment', method: 'POST', path: '/deployments', summary: 'Deploy a published version to the machines of assignments: a batch id and one deployment per machine', tags: ['deployments'],
    permission: 'deployments.create', highRisk: true,
    description: 'Send Idempotency-Key to make a retry safe: the same key with the same body answers the first answer; with another body it is 422.',
    headers: [{ name: 'Idempotency-Key', maxLength: 128, description: 'A key of 1..128 printable ASCII characters naming this request: a retry with the same key and body answers the first answer (per caller); the key with another body is 422.' }],
    body: createBody,
    responses: { 201: { description: 'Queued; poll GET /deployments/{id}.', schema: batchAnswer } },
    handler: async ({ body }, { principal, request }) => {
      const p = principalOf(principal);
      const key = idempotencyKey(request.headers['idempotency-key']);
      const requestHash = sha256Hex(JSON.stringify([p.id, body]));
      const earlier = key !== undefined ? await repo.batchByKey(`${p.id}:${key}`) : undefined;
      if (earlier) return { status: 201, body: earlierAnswer(earlier, requestHash) as z.infer<typeof batchAnswer> };
      const version = await checkCreate(ctx, p, body);
      const { planned, targets } = await planMachines(ctx, p, version, body.assignmentIds, ctx.now());
      await refuseUntakeable(targets, (t) => fleet().linkFor(t.machine), `version ${version.number} of ${version.program.name}`);
      const rules = trialRulesSchema.parse({ ...trialDefaults, ...(body.trialRules ?? {}) });
      const trials = body.isTrial ? await planTrials(repo, planned, version.id, rules, body.trialHours ?? DEFAULT_TRIAL_HOURS) : undefined;
      checkCount(planned);
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
  ({ repo, fleet, waitingForSlot }) => defineOperation({
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
      return { status: 200, body: { items: items.map((r) => out(r, waitingForSlot(r.id))), nextCursor: rows.length > query.limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null } };
    },
  }),
  ({ repo, visible, waitingForSlot }) => defineOperation({
    operationId: 'getDeployment', method: 'GET', path: '/deployments/{id}', summary: 'One deployment: status, timeline, hashes, reason', tags: ['deployments'], permission: 'deployments.read',
    params: z.object({ id: idOf('dep') }), responses: { 200: { description: 'The deployment.', schema: deploymentView } },
    handler: async ({ params }, { principal }) => {
      const row = await repo.get(params.id);
      if (!row || !(await visible(principalOf(principal), row))) throw new ProblemError('not-found', `no deployment ${params.id}`);
      return { status: 200, body: out(row, waitingForSlot(row.id)) };
    },
  }),
];

export function deploymentOperations(
  ctx: ProgramsContext, repo: DeploymentRepository, startBatch: BatchStarter, trialDefaults: TrialRulesInput, runner: Pick<DeploymentRunner, 'waitingForSlot'>,
): AnyRestOperation[] {
  const fleet = () => ctx.services.get('gateway-machines');
  const deps: DeploymentDeps = {
    ctx, repo, startBatch, trialDefaults, fleet, visible: async (p, r) => Boolean(await fleet().machine(r.machineId, p)), waitingForSlot: (id) => runner.waitingForSlot(id),
  };
  return DEPLOYMENT_OPERATIONS.map((make) => make(deps));
}
