/**
 * The trials' HTTP operations: list, one trial, promote, pull back.
 * docs/programs-trials.md.
 */
import { z } from 'zod';
import { defineOperation, type AnyRestOperation, type RestPrincipal } from '../../core/rest/operation.js';
import { decodeCursor, encodeCursor, pageOf, pageQueryShape } from '../../core/rest/paging.js';
import { ProblemError } from '../../core/rest/problem.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';
import { iso, isoOrNull } from '../../core/rest/fields.js';
import { idOf } from '../../core/rest/ids.js';
import { principalOf } from '../../core/rest/principal.js';
import { TRIAL_STATUSES, type TrialEvent } from './trial-machine.js';
import { decideTrial } from './trial-decisions.js';
import type { TrialRunner } from './trial-runner.js';
import type { TrialRepository, TrialRow } from './trial-store.js';
import { trialRulesSchema } from './trial-verdict.js';

const evidenceSchema = z.object({
  verdict: z.enum(['pass', 'fail', 'inconclusive']), failedRules: z.array(z.string()), inconclusiveBecause: z.string().nullable(),
  baseline: z.object({ cycles: z.number().int(), medianSec: z.number().nullable(), from: z.string(), to: z.string() }),
  trial: z.object({ cycles: z.number().int(), medianSec: z.number().nullable(), from: z.string(), to: z.string() }),
  cycleChangePct: z.number().nullable().describe('Median trial cycle time against the baseline\'s, in percent (positive: slower).'),
  alarms: z.array(z.object({ code: z.string(), message: z.string(), level: z.string(), at: z.string() })), alarmCount: z.number().int(),
  program: z.string().describe('The program name the cycles were matched by.'), truncated: z.boolean(),
});

export const trialView = z.object({
  id: z.string(), deploymentId: z.string(), batchId: z.string(), assignmentId: z.string(), machineId: z.string(), versionId: z.string(), dir: z.string(), fileName: z.string(),
  previousVersionId: z.string().nullable().describe('What the assignment released to the machine before the trial: what a pull-back puts back (null: nothing).'),
  status: z.enum(TRIAL_STATUSES), active: z.boolean().describe('True until promoted or pulled back (PV-25).'),
  watching: z.boolean().describe('Whether the machine is still being read for a verdict (until the trial\'s time is over).'),
  verdict: z.enum(['pass', 'fail', 'inconclusive']).nullable(), evidence: evidenceSchema.nullable(), evaluatedAt: z.string().nullable(),
  rules: trialRulesSchema, trialHours: z.number(), startedAt: z.string().nullable(), endsAt: z.string().nullable(),
  pullBackDeploymentId: z.string().nullable(),
  decision: z.object({ by: z.string(), onBehalfOf: z.string().nullable(), automatic: z.boolean(), note: z.string() }).nullable(),
  reason: z.string().nullable().describe('Why it was cancelled, why a pull-back failed, or why the machine could not be read.'),
  createdBy: z.string(), createdAt: z.string(), updatedAt: z.string(), finishedAt: z.string().nullable(),
  holder: z.string().nullable().describe('The program-service instance that drives the trial (its watching and pull-back); once ended, the one that ended it. Null until an instance claims it.'),
  pendingDecision: z.object({ kind: z.enum(['promote', 'pull-back']), by: z.string(), requestedAt: z.string() }).nullable()
    .describe('A promote or pull-back received by an instance that does not hold the trial, waiting for its holder to carry it out.'),
});

export function trialOut(t: TrialRow, now: number): z.infer<typeof trialView> {
  const ev = t.evidence;
  return {
    id: t.id, deploymentId: t.deploymentId, batchId: t.batchId, assignmentId: t.assignmentId, machineId: t.machineId, versionId: t.versionId, dir: t.dir, fileName: t.fileName,
    previousVersionId: t.previous?.versionId ?? null, status: t.status, active: t.finishedAt === null,
    watching: t.status === 'Active' && t.endsAt !== null && now < t.endsAt && t.decision === null,
    verdict: t.verdict,
    evidence: ev
      ? {
          ...ev,
          baseline: { ...ev.baseline, from: iso(ev.baseline.from), to: iso(ev.baseline.to) },
          trial: { ...ev.trial, from: iso(ev.trial.from), to: iso(ev.trial.to) },
          alarms: ev.alarms.map((a) => ({ ...a, at: iso(a.at) })),
        }
      : null,
    evaluatedAt: isoOrNull(t.evaluatedAt), rules: t.rules, trialHours: t.trialHours, startedAt: isoOrNull(t.startedAt), endsAt: isoOrNull(t.endsAt), pullBackDeploymentId: t.pullBackDeploymentId,
    decision: t.decision ? { by: t.decision.by, onBehalfOf: t.decision.onBehalfOf, automatic: t.decision.automatic, note: t.decision.note } : null,
    reason: t.reason, createdBy: t.createdBy, createdAt: iso(t.createdAt), updatedAt: iso(t.updatedAt), finishedAt: isoOrNull(t.finishedAt),
    holder: t.holder,
    pendingDecision: t.pendingDecision ? { kind: t.pendingDecision.type === 'PROMOTE' ? 'promote' : 'pull-back', by: t.pendingDecision.decision.by, requestedAt: iso(t.pendingDecision.at) } : null,
  };
}

export function trialOperations(ctx: ProgramsContext, repo: TrialRepository, runner: TrialRunner): AnyRestOperation[] {
  const fleet = () => ctx.services.get('gateway-machines');
  const visible = async (p: RestPrincipal, t: TrialRow) => Boolean(await fleet().machine(t.machineId, p));
  const find = async (id: string, p: RestPrincipal) => {
    const t = await repo.get(id);
    if (!t || !(await visible(p, t))) throw new ProblemError('not-found', `no trial ${id}`);
    return t;
  };
  const noteBody = z.object({ note: z.string().max(1000).regex(/^[^\p{Cc}]*$/u, 'no control characters').default('').describe('Why (kept in the audit).') }).strict();

  const decide = (kind: 'promote' | 'pull-back') =>
    defineOperation({
      operationId: kind === 'promote' ? 'promoteTrial' : 'pullBackTrial', method: 'POST', path: `/trials/{id}/${kind}`,
      summary: kind === 'promote'
        ? 'Promote an active trial: its version becomes what the assignment releases to the machine'
        : 'Pull back an active trial: the previously released file is deployed back and verified',
      tags: ['trials'], permission: 'trials.decide', highRisk: true,
      params: z.object({ id: idOf('trl') }), body: noteBody.default({ note: '' }),
      responses: {
        200: { description: kind === 'promote' ? 'Promoted.' : 'The pull-back deployment started (status PullingBack); poll the trial.', schema: trialView },
        202: {
          description: 'Another instance holds the trial and has not carried the decision out yet (it is in `pendingDecision`); it will, once; poll the trial.',
          schema: trialView,
        },
      },
      handler: async ({ params, body }, { principal }) => {
        const p = principalOf(principal);
        const t = await find(params.id, p);
        if (t.finishedAt !== null) {
          throw new ProblemError('state-conflict', `trial ${t.id} is ${t.status}; only an active trial is promoted or pulled back`, { extensions: { state: t.status } });
        }
        if (kind === 'pull-back' && !t.previous) {
          throw new ProblemError('state-conflict', `nothing was released to this machine under assignment ${t.assignmentId} before the trial, so there is no earlier file to put back; promote the trial, or deploy another version`, { extensions: { state: t.status } });
        }
        const decision = { by: p.name, onBehalfOf: p.onBehalfOf, authMethod: p.authMethod, automatic: false, note: body.note };
        const event: TrialEvent = kind === 'promote' ? { type: 'PROMOTE', decision } : { type: 'PULL_BACK', decision };
        const result = await decideTrial(runner, t, event);
        if (result.outcome === 'refused') throw new ProblemError('state-conflict', result.why, { extensions: { state: result.trial.status } });
        return { status: result.outcome === 'done' ? 200 : 202, body: trialOut(result.trial, ctx.now()) };
      },
    });

  const ops = [
    defineOperation({
      operationId: 'listTrials', method: 'GET', path: '/trials', summary: 'Trials, newest first; filter by status, machine and batch', tags: ['trials'], permission: 'deployments.read',
      query: z.object({ ...pageQueryShape, status: z.enum(TRIAL_STATUSES).optional(), machineId: idOf('mch').optional(), batchId: idOf('bat').optional() }),
      responses: { 200: { description: 'A page of trials.', schema: pageOf(trialView) } },
      handler: async ({ query }, { principal }) => {
        const p = principalOf(principal);
        const cursor = query.cursor ? decodeCursor(query.cursor, { createdAt: 'number', id: 'string' }) : null;
        const rows = await repo.list(
          { ...(query.status ? { status: query.status } : {}), ...(query.machineId ? { machineId: query.machineId } : {}), ...(query.batchId ? { batchId: query.batchId } : {}) },
          query.limit + 1, cursor ? { createdAt: Number(cursor.createdAt), id: String(cursor.id) } : null,
        );
        const pageRows = rows.slice(0, query.limit);
        const items: TrialRow[] = [];
        for (const r of pageRows) if (await visible(p, r)) items.push(r);
        const last = pageRows[pageRows.length - 1];
        const now = ctx.now();
        return { status: 200, body: { items: items.map((t) => trialOut(t, now)), nextCursor: rows.length > query.limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null } };
      },
    }),
    defineOperation({
      operationId: 'getTrial', method: 'GET', path: '/trials/{id}', summary: 'One trial: status, verdict and its evidence, decision', tags: ['trials'], permission: 'deployments.read',
      params: z.object({ id: idOf('trl') }), responses: { 200: { description: 'The trial.', schema: trialView } },
      handler: async ({ params }, { principal }) => ({ status: 200, body: trialOut(await find(params.id, principalOf(principal)), ctx.now()) }),
    }),
    decide('promote'),
    decide('pull-back'),
  ];
  return ops as AnyRestOperation[];
}
