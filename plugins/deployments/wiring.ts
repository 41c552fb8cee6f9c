/**
 * How the deployments plugin's parts are put together: the runner of the
 * deployment actors and who waits for their end, the batch starter the
 * operations and the service share, deployments the service makes for
 * itself (pull-backs, drift rejects, restores), the trial runner, and the
 * service other plugins use.
 */
import type { GatewayLink } from '../../core/gateway-link/types.js';
import { sha256Hex } from '../../core/values/hash.js';
import { newId } from '../../core/rest/ids.js';
import type { RestPrincipal } from '../../core/rest/operation.js';
import { auditActor } from '../../core/rest/principal.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';
import type { WriteTx } from '../../core/store/database.js';
import { SYSTEM } from './common.js';
import { DEPLOYMENT_MACHINE_VERSION } from './machine.js';
import { earlierAnswer, type BatchStarter } from './operations.js';
import type { Lease } from './lease.js';
import { DeploymentRunner, type FleetMachine, type RunnerOptions } from './runner.js';
import type { DeploymentOutcome, DeploymentsService, ExpectedFile, RecentDeployment } from './service.js';
import { DeploymentRepository, type DeploymentPurpose, type DeploymentRow } from './store.js';
import { TRIAL_MACHINE_VERSION } from './trial-machine.js';
import { TrialRunner, type TrialRunnerOptions } from './trial-runner.js';
import { TrialRepository } from './trial-store.js';
import { startBatchSpan, type BatchSpan } from './trace.js';
import { errorType } from '../../core/telemetry/tracing.js';

/** Transient failures are retried until this long after the request. */
export const DEPLOYMENT_DEADLINE_MS = 10 * 60_000;

/** A deployment the service makes for itself: one file to one machine. */
interface DirectDeployment {
  machineId: string; dir: string; fileName: string; content: Buffer; versionId: string | null; assignmentId: string | null; purpose: DeploymentPurpose;
  principal: Pick<RestPrincipal, 'name' | 'onBehalfOf' | 'authMethod'>; details?: Record<string, unknown>; inTx?: (tx: WriteTx, deploymentId: string) => Promise<void>;
}

export interface DeploymentsWiring {
  repo: DeploymentRepository;
  trialRepo: TrialRepository;
  runner: DeploymentRunner;
  trialRunner: TrialRunner;
  startBatch: BatchStarter;
  service: DeploymentsService;
}

const outcomeOf = (r: DeploymentRow): DeploymentOutcome => ({ id: r.id, status: r.status === 'Succeeded' ? 'Succeeded' : 'Failed', reason: r.reason, sha256: r.sha256, readBackSha256: r.readBackSha256 });

/** How often a deployment waited for is looked up, in case another instance (which took it over) finished it. */
const OUTCOME_POLL_MS = 2000;

/** Who waits for a deployment's end (trials, the mirror), told after the final status is stored. */
function outcomes(repo: DeploymentRepository): { finished(row: DeploymentRow): void; outcome(id: string): Promise<DeploymentOutcome> } {
  const waiting = new Map<string, ((o: DeploymentOutcome) => void)[]>();
  let poll: NodeJS.Timeout | undefined;
  const finished = (row: DeploymentRow) => {
    for (const resolve of waiting.get(row.id)?.splice(0) ?? []) resolve(outcomeOf(row));
    waiting.delete(row.id);
    if (waiting.size > 0) return;
    clearInterval(poll);
    poll = undefined;
  };
  const look = async () => {
    for (const id of [...waiting.keys()]) {
      const row = await repo.get(id).catch(() => undefined);
      if (row && row.finishedAt !== null) finished(row);
    }
  };
  return {
    finished,
    async outcome(id) {
      const promise = new Promise<DeploymentOutcome>((resolve) => {
        const list = waiting.get(id) ?? [];
        list.push(resolve);
        waiting.set(id, list);
      });
      const row = await repo.get(id);
      if (!row || row.finishedAt !== null) {
        waiting.delete(id);
        if (!row) throw new Error(`no deployment ${id}`);
        return outcomeOf(row);
      }
      if (!poll) (poll = setInterval(() => void look(), OUTCOME_POLL_MS)).unref();
      return promise;
    },
  };
}

/** What the actors' steps need, read once for a batch while it is stored: its machines and their gateways' links. */
async function batchTargets(ctx: ProgramsContext, machineIds: readonly string[]): Promise<{ machines: Map<string, FleetMachine>; links: Map<string, GatewayLink | undefined> }> {
  const fleet = ctx.services.get('gateway-machines');
  const machines = new Map((await fleet.machines([...new Set(machineIds)], SYSTEM)).map((m) => [m.id, m]));
  const links = new Map<string, GatewayLink | undefined>();
  for (const m of machines.values()) {
    if (m.present && !links.has(m.gatewayId)) links.set(m.gatewayId, await fleet.linkFor(m).catch(() => undefined));
  }
  return { machines, links };
}

function batchStarter(ctx: ProgramsContext, repo: DeploymentRepository, trialRepo: TrialRepository, runner: DeploymentRunner, trials: () => TrialRunner | undefined): BatchStarter {
  const store = storeBatch(ctx, repo, trialRepo, runner, trials);
  return async (b) => {
    const batchId = newId('bat');
    // The batch is a trace: its span's context is stored with it, and every deployment's steps continue it (trace.ts).
    const span = startBatchSpan(batchId, { 'cncgw.deployment.purpose': b.purpose, 'cncgw.machines': b.planned.length });
    try {
      return await store(b, batchId, span);
    } catch (err) {
      span.fail(errorType(err));
      throw err;
    } finally {
      span.end();
    }
  };
}

/** Stores a batch with its trace context, then starts its actors and trials. */
function storeBatch(ctx: ProgramsContext, repo: DeploymentRepository, trialRepo: TrialRepository, runner: DeploymentRunner, trials: () => TrialRunner | undefined) {
  return async (b: Parameters<BatchStarter>[0], batchId: string, span: BatchSpan): ReturnType<BatchStarter> => {
    const answer = b.answer(batchId);
    const now = ctx.now();
    // A deployment whose machine or gateway cannot be had now looks them up itself (and fails with the reason).
    const targets = batchTargets(ctx, b.planned.map((d) => d.machineId))
      .catch(() => ({ machines: new Map<string, FleetMachine>(), links: new Map<string, GatewayLink | undefined>() }));
    const stored = await ctx.db.write(async (tx) => {
      if (b.key !== null) {
        // The same key sent to two instances at once: the second waits for the first's batch, and answers it.
        await tx.lock(`deploy_batches ${b.key}`);
        const earlier = await repo.batchByKey(b.key, tx);
        if (earlier) return { earlier, inserted: [] };
      }
      const inserted = await repo.insertBatch(tx, {
        id: batchId, versionId: b.versionId, purpose: b.purpose, isTrial: b.isTrial, trialHours: b.trialHours, key: b.key, requestHash: b.requestHash,
        answer: JSON.stringify(answer), createdBy: b.createdBy.name, createdAt: now, deadline: now + DEPLOYMENT_DEADLINE_MS, trace: span.carrier,
      }, b.planned, DEPLOYMENT_MACHINE_VERSION);
      for (const t of b.trials ?? []) await trialRepo.insert(tx, { ...t, batchId, createdBy: b.createdBy.name, createdAt: now }, TRIAL_MACHINE_VERSION);
      await b.inTx?.(tx, batchId);
      await ctx.audit.append(tx, {
        ...auditActor(b.createdBy), category: 'deployment', action: 'deployment.create', entityType: 'batch', entityId: batchId,
        ...(b.planned.length === 1 && b.planned[0] ? { machine: b.planned[0].machineId } : {}),
        details: { purpose: b.purpose, deployments: b.planned.length, machines: b.planned.slice(0, 100).map((d) => d.machineId), ...b.audit },
      });
      return { earlier: undefined, inserted };
    }, { transaction: true });
    if (stored.earlier) {
      // The same request again: the batch stored earlier is its answer, in that batch's trace.
      span.set({ 'cncgw.outcome': 'earlier', 'cncgw.deployment.batch.id': stored.earlier.id });
      return { batchId: stored.earlier.id, answer: earlierAnswer(stored.earlier, b.requestHash) };
    }
    const rows = stored.inserted;
    repo.track(rows);
    const { machines, links } = await targets;
    for (const [i, d] of b.planned.entries()) {
      const machine = machines.get(d.machineId);
      const link = machine?.present ? links.get(machine.gatewayId) : undefined;
      runner.start(d.id, now + DEPLOYMENT_DEADLINE_MS, machine && link ? { row: rows[i] as DeploymentRow, machine, link, content: d.content } : undefined, span.carrier);
    }
    for (const t of b.trials ?? []) trials()?.start(t.id);
    return { batchId, answer };
  };
}

/** Deploys one file the service puts on a machine for itself, as a batch of one. */
function directDeployer(ctx: ProgramsContext, startBatch: BatchStarter): (r: DirectDeployment) => Promise<{ deploymentId: string; batchId: string }> {
  return async (r) => {
    const machine = await ctx.services.get('gateway-machines').machine(r.machineId, SYSTEM);
    if (!machine) throw new Error(`machine ${r.machineId} is not in the fleet`);
    const id = newId('dep');
    const sha256 = sha256Hex(r.content);
    const { batchId } = await startBatch({
      versionId: r.versionId, purpose: r.purpose, isTrial: false, trialHours: null, key: null, requestHash: sha256, createdBy: r.principal,
      planned: [{ id, assignmentId: r.assignmentId, machineId: machine.id, gatewayId: machine.gatewayId, dir: r.dir, fileName: r.fileName, content: r.content, sha256 }],
      answer: (b) => ({ batchId: b, deployments: [{ id, assignmentId: r.assignmentId, machineId: machine.id }] }),
      audit: { versionId: r.versionId, sha256, fileName: r.fileName, ...(r.details ?? {}) },
      ...(r.inTx ? { inTx: (tx: WriteTx) => r.inTx!(tx, id) } : {}),
    });
    return { deploymentId: id, batchId };
  };
}

/** The newest `limit` deployments on machines the principal sees (at most 10 pages read: a caller with a narrow scope gets fewer). */
async function recentDeployments(ctx: ProgramsContext, repo: DeploymentRepository, limit: number, principal: RestPrincipal, waitingForSlot: (id: string) => boolean): Promise<RecentDeployment[]> {
  const out: RecentDeployment[] = [];
  let before: { createdAt: number; id: string } | null = null;
  for (let page = 0; page < 10 && out.length < limit; page++) {
    const rows = await repo.list({}, 100, before);
    for (const r of rows) {
      if (out.length >= limit) break;
      if (!(await ctx.services.get('gateway-machines').machine(r.machineId, principal))) continue;
      out.push({ id: r.id, batchId: r.batchId, machineId: r.machineId, versionId: r.versionId, purpose: r.purpose, fileName: r.fileName, status: r.status, reason: r.reason, waitingForSlot: r.status === 'Transferring' && waitingForSlot(r.id), createdBy: r.createdBy, createdAt: r.createdAt, finishedAt: r.finishedAt });
    }
    const last = rows[rows.length - 1];
    if (rows.length < 100 || !last) break;
    before = { createdAt: last.createdAt, id: last.id };
  }
  return out;
}

/** The files a machine should have (its releases, and an active trial's version instead), and the files busy with an unfinished deployment or trial. */
async function expectedOn(repo: DeploymentRepository, trialRepo: TrialRepository, machineId: string): Promise<{ expected: ExpectedFile[]; busy: { dir: string; fileName: string }[] }> {
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
}

/** `options` are the runners' (how they claim at start, how often decisions are looked for); the defaults suit the service. */
export function wireDeployments(ctx: ProgramsContext, lease: Lease, options: RunnerOptions & TrialRunnerOptions = {}): DeploymentsWiring {
  const outbox = ctx.services.get('webhooks.outbox');
  const repo = new DeploymentRepository(ctx.db, ctx.audit, lease, outbox, ctx.now);
  const trialRepo = new TrialRepository(ctx.db, lease, ctx.now);
  const waiting = outcomes(repo);
  const runner = new DeploymentRunner(ctx, repo, ctx.logger, (row) => {
    outbox.kick();
    waiting.finished(row);
  }, options);
  // The batch starter starts a batch's trials through the trial runner, made below.
  const startBatch = batchStarter(ctx, repo, trialRepo, runner, () => trialRunner);
  const direct = directDeployer(ctx, startBatch);
  const trialRunner = new TrialRunner(ctx, trialRepo, repo, {
    outcome: waiting.outcome,
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
  }, ctx.logger, options);
  const service: DeploymentsService = {
    deployFile: (r) => direct(r),
    outcome: waiting.outcome,
    release: (assignmentId, machineId) => repo.release(assignmentId, machineId),
    releasesOn: (machineId) => repo.releasesOn(machineId),
    content: async (sha256) => {
      const c = await repo.content(sha256);
      return c.length > 0 || sha256 === sha256Hex(c) ? c : undefined;
    },
    failedSince: (since) => repo.countFailedSince(since),
    recent: (limit, principal) => recentDeployments(ctx, repo, limit, principal, (id) => runner.waitingForSlot(id)),
    expectedOn: (machineId) => expectedOn(repo, trialRepo, machineId),
    activeTrials: () => trialRepo.countActive(),
  };
  return { repo, trialRepo, runner, trialRunner, startBatch, service };
}
