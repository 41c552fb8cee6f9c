/**
 * The audit endpoints of the program service: GET /audit (filters and cursor
 * paging, newest first), GET /audit/export?format=csv (the same selection
 * as RFC 4180 CSV, streamed), both limited to the caller's scopes
 * (scope.ts), and GET /audit/verify (PV-15), which walks the whole chain for
 * every caller. The chain itself is core/roles/programs/audit/chain.ts; docs/audit.md.
 */
import { z } from 'zod';
import { GatewayError } from '../../core/interfaces/errors.js';
import { definePlugin } from '../../core/runtime/plugin-host.js';
import { defineOperation, type RestPrincipal } from '../../core/rest/operation.js';
import { ProblemError } from '../../core/rest/problem.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, TIME_FORMS, type AuditFilter } from '../../core/roles/programs/audit/chain.js';
import { auditScope } from './scope.js';
import { registerAuditMetrics } from './metrics.js';

const filterShape = {
  principalName: z.string().min(1).max(1024).optional(),
  machine: z.string().min(1).max(1024).optional(),
  entityType: z.string().min(1).max(1024).optional(),
  entityId: z.string().min(1).max(1024).optional(),
  category: z.string().min(1).max(1024).optional(),
  from: z.string().min(1).max(64).optional().describe(`Inclusive: ${TIME_FORMS}.`),
  to: z.string().min(1).max(64).optional().describe(`Exclusive instant, or a date meaning up to the end of that day: ${TIME_FORMS}.`),
};

const recordView = z.object({
  seq: z.number().int(), time: z.string(), principalName: z.string(), onBehalfOf: z.string().nullable(), authMethod: z.string(), category: z.string(),
  action: z.string(), entityType: z.string().nullable(), entityId: z.string().nullable(), machine: z.string().nullable(),
  details: z.record(z.string(), z.unknown()).nullable(), prevHash: z.string(), hash: z.string(),
});

/** The chain's INVALID_PARAMETER (`from: found …; accepted: …`) as a 400 naming the query parameter and what it accepts. */
function asProblem(err: unknown): never {
  if (err instanceof GatewayError && err.errorName === 'INVALID_PARAMETER') {
    const detail = err.detail ?? err.message;
    const match = /^(principalName|machine|entityType|entityId|category|from|to|limit|cursor|order): (.*)$/s.exec(detail);
    const field = match?.[1] ?? 'query';
    const message = (match?.[2] ?? detail).slice(0, 300);
    const accepted = /; accepted: (.*)$/s.exec(message)?.[1];
    throw new ProblemError('invalid-request', detail.slice(0, 400), { errors: [{ field: `query.${field}`, message, ...(accepted ? { accepted } : {}) }] });
  }
  throw err;
}

/** Today's date (YYYY-MM-DD) in the service's time zone, for the export's file name. */
function localDate(ms: number, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(ms);
}

/** The query's filters, and the caller's scope as the condition every record must meet as well. */
async function filterOf(ctx: ProgramsContext, principal: RestPrincipal | null, query: Partial<Record<keyof typeof filterShape, string>>): Promise<AuditFilter> {
  if (!principal) throw new ProblemError('unauthenticated', 'sign in first');
  const filter: AuditFilter = {};
  for (const key of Object.keys(filterShape) as (keyof typeof filterShape)[]) {
    const value = query[key];
    if (value !== undefined) filter[key] = value;
  }
  const scope = await auditScope(ctx, principal);
  if (scope) filter.scope = scope;
  return filter;
}

export const auditApiPlugin = definePlugin<ProgramsContext>({
  name: 'audit-api',
  register(ctx) {
    registerAuditMetrics(ctx.metrics, ctx.db);
    ctx.rest.define(defineOperation({
      operationId: 'listAudit', method: 'GET', path: '/audit', summary: 'Audit records in your scopes, newest first, filtered and paged', tags: ['audit'], permission: 'audit.read',
      query: z.object({
        ...filterShape,
        limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE).describe(`Records per page, 1..${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}).`),
        cursor: z.string().min(1).max(64).optional().describe('The nextCursor of the previous page.'),
        order: z.enum(['newest', 'oldest']).optional().describe('newest first unless given.'),
      }),
      responses: { 200: { description: 'A page of records.', schema: z.object({ items: z.array(recordView), nextCursor: z.string().nullable() }) } },
      handler: async ({ query }, { principal }) => {
        const page = await ctx.audit.query(await filterOf(ctx, principal, query), { limit: query.limit, ...(query.cursor ? { cursor: query.cursor } : {}), ...(query.order ? { order: query.order } : {}) }).catch(asProblem);
        return { status: 200, body: { items: page.records, nextCursor: page.nextCursor } };
      },
    }));
    ctx.rest.define(defineOperation({
      operationId: 'exportAudit', method: 'GET', path: '/audit/export', summary: 'The selected audit records in your scopes as a file (CSV, oldest first)', tags: ['audit'], permission: 'audit.read',
      query: z.object({ ...filterShape, format: z.enum(['csv']).describe('The file format; csv (RFC 4180).') }),
      responses: { 200: { description: 'RFC 4180 CSV with a header row; cells a spreadsheet would read as formulas are prefixed with a quote.', contentType: 'text/csv', schema: z.string(), headers: { 'Content-Disposition': 'attachment; filename="audit-<date>.csv", <date> being today (YYYY-MM-DD) in the service time zone' } } },
      handler: async ({ query }, { principal }) => {
        const chunks = ctx.audit.exportCsv(await filterOf(ctx, principal, query));
        // The first chunk (the header) comes only after the filter was checked, so a bad filter is a 400, not a broken file.
        const first = await chunks.next().catch(asProblem);
        const date = localDate(ctx.now(), ctx.timeZone);
        async function* all(): AsyncGenerator<string> {
          if (!first.done) yield first.value;
          yield* chunks;
        }
        return { status: 200, body: all(), headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="audit-${date}.csv"` } };
      },
    }));
    ctx.rest.define(defineOperation({
      operationId: 'verifyAudit', method: 'GET', path: '/audit/verify', summary: 'Walk the whole hash chain, whatever your scopes: is every record intact?', tags: ['audit'], permission: 'audit.read',
      responses: { 200: { description: 'intact, records checked, and the first broken seq (null when intact).', schema: z.object({ intact: z.boolean(), checked: z.number().int(), firstBrokenSeq: z.number().int().nullable() }) } },
      handler: async () => {
        const result = await ctx.audit.verify();
        return { status: 200, body: { intact: result.intact, checked: result.checked, firstBrokenSeq: result.firstBrokenSeq } };
      },
    }));
  },
});
