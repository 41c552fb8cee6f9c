/**
 * The dashboard: the counters a person looks at first, each a question with
 * a list behind it, and the latest deployments. Composed from the services
 * of the fleet, vault, mirror and deployments. docs/programs-dashboard.md.
 */
import { z } from 'zod';
import { definePlugin } from '../../core/runtime/plugin-host.js';
import { defineOperation, type AnyRestOperation } from '../../core/rest/operation.js';
import { iso, isoOrNull } from '../../core/rest/fields.js';
import { ProblemError } from '../../core/rest/problem.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';

const DAY_MS = 24 * 3_600_000;
const count = (what: string) => z.number().int().min(0).describe(what);

const summaryView = z.object({
  gatewaysTotal: count('Gateways registered.'),
  gatewaysUnreachable: count('Gateways whose last call did not reach them (GET /gateways shows lastError).'),
  machinesWithMirrorError: count('Machines with the mirror on whose last read failed (GET /machines/{id}/mirror shows the error).'),
  pendingApprovals: count('Approvals waiting for a decision (GET /approvals?state=pending).'),
  openDrift: count('Drift items not decided yet (GET /drift?status=open).'),
  activeTrials: count('Trials not yet promoted or pulled back (GET /trials).'),
  failedDeployments24h: count('Deployments that ended Failed in the last 24 hours (GET /deployments?status=Failed).'),
  at: z.string().describe('When the counts were taken.'),
});
const recentView = z.object({
  items: z.array(z.object({
    id: z.string(), batchId: z.string(), machineId: z.string(), machineName: z.string().nullable(), versionId: z.string().nullable(), purpose: z.string(), fileName: z.string(),
    status: z.string(), reason: z.string().nullable(),
    waitingForSlot: z.boolean().describe('Transferring, but waiting for one of its gateway\'s transfer slots (as on GET /deployments).'), createdBy: z.string(), createdAt: z.string(), finishedAt: z.string().nullable(),
  })),
});

function operations(ctx: ProgramsContext): AnyRestOperation[] {
  const ops = [
    defineOperation({
      operationId: 'getDashboardSummary', method: 'GET', path: '/dashboard/summary', summary: 'The counters of the service: gateways, mirror errors, approvals, drift, trials, failed deployments', tags: ['dashboard'], permission: 'fleet.read',
      description: 'Counts of the whole service, whatever the caller\'s scopes (a count names no object); each counter\'s list is filtered by scope as usual.',
      responses: { 200: { description: 'The summary (every count an integer).', schema: summaryView } },
      handler: async () => {
        const now = ctx.now();
        const s = ctx.services;
        const [gateways, machinesWithMirrorError, pendingApprovals, openDrift, activeTrials, failedDeployments24h] = await Promise.all([
          s.get('gateway-machines').gatewayCounts(), s.get('mirror').machinesWithError(), s.get('vault.versions').pendingApprovals(), s.get('mirror').openDrift(),
          s.get('deployments').activeTrials(), s.get('deployments').failedSince(now - DAY_MS),
        ]);
        return {
          status: 200,
          body: { gatewaysTotal: gateways.total, gatewaysUnreachable: gateways.unreachable, machinesWithMirrorError, pendingApprovals, openDrift, activeTrials, failedDeployments24h, at: iso(now) },
        };
      },
    }),
    defineOperation({
      operationId: 'getRecentDeployments', method: 'GET', path: '/dashboard/recent-deployments', summary: 'The latest deployments, newest first, with their machine\'s name', tags: ['dashboard'], permission: 'deployments.read',
      query: z.object({ limit: z.coerce.number().int().min(1).max(100).default(20).describe('How many (1..100, default 20).') }),
      responses: { 200: { description: 'The latest deployments you may see.', schema: recentView } },
      handler: async ({ query }, { principal }) => {
        if (!principal) throw new ProblemError('unauthenticated', 'sign in first');
        const rows = await ctx.services.get('deployments').recent(query.limit, principal);
        const names = new Map<string, string | null>();
        for (const r of rows) if (!names.has(r.machineId)) names.set(r.machineId, (await ctx.services.get('gateway-machines').machine(r.machineId, principal))?.name ?? null);
        return {
          status: 200,
          body: { items: rows.map((r) => ({ ...r, machineName: names.get(r.machineId) ?? null, createdAt: iso(r.createdAt), finishedAt: isoOrNull(r.finishedAt) })) },
        };
      },
    }),
  ];
  return ops as AnyRestOperation[];
}

export const dashboardPlugin = definePlugin<ProgramsContext>({
  name: 'dashboard',
  dependsOn: ['vault', 'gateways', 'deployments', 'mirror'],
  register(ctx) {
    for (const op of operations(ctx)) ctx.rest.define(op);
  },
});
