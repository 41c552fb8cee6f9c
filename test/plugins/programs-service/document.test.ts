/**
 * The program service as `npm start` composes it: its OpenAPI document
 * (every operation of every plugin) is valid OpenAPI 3.1, and every
 * operation documents its input and the schema of each answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { PROGRAMS_PLUGINS } from '../../../core/roles/programs/compose.js';
import { accountsPlugin } from '../../../plugins/accounts/index.js';
import { startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { TEST_ACCOUNTS } from '../../fixtures/programs-accounts.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const CONTRACT_FILE = join(import.meta.dirname, '../../fixtures/contract-v1.json');
/** The v1 contract as released: each operation and the fields of its successful answers. */
const RECORDED = JSON.parse(readFileSync(CONTRACT_FILE, 'utf8')) as Record<string, string[]>;

/** Each operation (`GET /api/v1/x`) with the top-level fields of its 2xx JSON answers (for a page: of its items too). */
function contractOf(doc: Record<string, unknown>): Record<string, string[]> {
  const components = ((doc.components as { schemas?: Record<string, unknown> } | undefined)?.schemas ?? {});
  const resolve = (s: unknown): Record<string, unknown> | undefined => {
    const ref = (s as { $ref?: string } | undefined)?.$ref;
    return (ref ? components[ref.split('/').pop() as string] : s) as Record<string, unknown> | undefined;
  };
  const fieldsOf = (schema: unknown, prefix = ''): string[] => {
    const s = resolve(schema);
    const props = (s?.properties ?? {}) as Record<string, unknown>;
    const own = Object.keys(props).map((k) => `${prefix}${k}`);
    const items = resolve((props.items as { items?: unknown } | undefined)?.items);
    return [...own, ...(items && prefix === '' ? fieldsOf(items, 'items[].') : [])];
  };
  const out: Record<string, string[]> = {};
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Operation>>)) {
    for (const [method, op] of Object.entries(item)) {
      const fields = new Set<string>();
      for (const [status, response] of Object.entries(op.responses)) {
        if (!/^2/.test(status)) continue;
        for (const f of fieldsOf(response.content?.['application/json']?.schema)) fields.add(f);
      }
      out[`${method.toUpperCase()} ${path}`] = [...fields].sort();
    }
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

type Operation = { operationId: string; parameters?: { in: string }[]; requestBody?: { content: Record<string, { schema?: unknown }> }; responses: Record<string, { $ref?: string; content?: Record<string, { schema?: unknown }> }> };

describe('the program service document', () => {
  let svc: TestProgramService;
  let doc: Record<string, unknown>;

  beforeAll(async () => {
    svc = await startTestProgramService({ plugins: PROGRAMS_PLUGINS.map((p) => (p === accountsPlugin ? TEST_ACCOUNTS : p)), env: { PROGRAMS_ADMIN_PASSWORD: 'document-test-password' } });
    doc = await svc.document();
  });
  afterAll(() => svc.stop());

  it('PV-02 is a valid OpenAPI 3.1 document served at /openapi/v1.json, with the reference at /api/docs', async () => {
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(doc.openapi).toBe('3.1.0');
    expect((await fetch(`${svc.url}/api/docs/`)).status).toBe(200);
  });

  it('PV-03 PV-30 PV-31 PV-32 PV-33 PV-34 PV-35 PV-36 PV-37 PV-38 PV-39 serves every endpoint of the specification, under /api/v1', () => {
    const paths = doc.paths as Record<string, Record<string, Operation>>;
    const have = new Set(Object.entries(paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`)));
    const spec = [
      'POST /auth/login', 'POST /auth/logout', 'POST /auth/change-password', 'GET /auth/me',
      'POST /libraries', 'GET /libraries', 'POST /programs', 'GET /programs', 'POST /programs/{id}/versions', 'GET /programs/{id}/versions',
      'POST /versions/{id}/submit', 'GET /programs/{id}/diff', 'GET /versions/{id}/content', 'POST /versions/{id}/obsolete',
      'GET /approvals', 'POST /approvals/{id}/decide',
      'POST /admin/users', 'GET /admin/users', 'POST /admin/service-tokens', 'GET /admin/service-tokens',
      'GET /audit', 'GET /audit/export', 'GET /audit/verify',
      'POST /gateways', 'GET /gateways', 'POST /gateways/{id}/sync', 'GET /machines/{id}', 'PATCH /machines/{id}',
      'POST /machine-groups', 'GET /machine-groups', 'PATCH /machine-groups/{id}', 'GET /machines/{id}/files', 'POST /machines/{id}/request-checkin',
      'POST /machine-assignments', 'GET /machine-assignments', 'POST /machine-assignments/{id}/preview-transform',
      'POST /deployments', 'GET /deployments', 'GET /deployments/{id}',
      'GET /trials', 'POST /trials/{id}/promote', 'POST /trials/{id}/pull-back',
      'GET /drift', 'POST /drift/{id}/accept', 'POST /drift/{id}/reject', 'POST /machine-files/{id}/adopt', 'POST /machines/{id}/adopt-all',
      'GET /machine-files/{id}/snapshots', 'POST /machine-files/{id}/restore',
      'POST /admin/webhooks', 'GET /admin/webhooks', 'GET /admin/webhooks/deliveries',
      'GET /dashboard/summary', 'GET /dashboard/recent-deployments',
    ];
    expect(spec.filter((e) => !have.has(e.replace(' /', ' /api/v1/')))).toEqual([]);
    expect([...have].every((e) => e.split(' ')[1]?.startsWith('/api/v1/'))).toBe(true);
  });

  it('PV-80 v1 only grows: every operation and every answer field of the recorded v1 contract is still served', () => {
    const now = contractOf(doc);
    if (process.env.RECORD_CONTRACT === '1') writeFileSync(CONTRACT_FILE, `${JSON.stringify({ ...RECORDED, ...now }, null, 2)}\n`);
    const lost: string[] = [];
    for (const [operation, fields] of Object.entries(RECORDED)) {
      const served = now[operation];
      if (!served) lost.push(`${operation}: gone`);
      else for (const field of fields) if (!served.includes(field)) lost.push(`${operation}: answer field ${field} gone`);
    }
    // A breaking change ships as /api/v2 beside v1. An addition is recorded with RECORD_CONTRACT=1 (test/fixtures/contract-v1.json).
    expect(lost).toEqual([]);
    expect(Object.keys(now).filter((op) => !(op in RECORDED))).toEqual([]);
  });

  it('documents for every operation its parameters or body, and a schema for every answer with content', () => {
    const paths = doc.paths as Record<string, Record<string, Operation>>;
    const missing: string[] = [];
    for (const [path, item] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(item)) {
        const params = (path.match(/\{/g) ?? []).length;
        if ((op.parameters ?? []).filter((p) => p.in === 'path').length !== params) missing.push(`${method} ${path}: path parameters`);
        for (const [media, content] of Object.entries(op.requestBody?.content ?? {})) if (!content.schema) missing.push(`${method} ${path}: request ${media}`);
        for (const [status, response] of Object.entries(op.responses)) {
          if (response.$ref) continue;
          if (status !== '204' && status !== '304' && !response.content) missing.push(`${method} ${path} ${status}: no content`);
          for (const [media, content] of Object.entries(response.content ?? {})) if (!content.schema) missing.push(`${method} ${path} ${status} ${media}: no schema`);
        }
      }
    }
    expect(missing).toEqual([]);
  });
});
