/**
 * The program service as `npm start` composes it: its OpenAPI document
 * (every operation of every plugin) is valid OpenAPI 3.1, and every
 * operation documents its input and the schema of each answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { PROGRAMS_PLUGINS } from '../../../plugins/index.js';
import { accountsPlugin } from '../../../plugins/accounts/index.js';
import { startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { TEST_ACCOUNTS } from '../../fixtures/programs-accounts.js';

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

  it('PV-03 PV-30 PV-31 PV-32 PV-38 PV-39 serves every endpoint of the specification this service has, under /api/v1', () => {
    const paths = doc.paths as Record<string, Record<string, Operation>>;
    const have = new Set(Object.entries(paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`)));
    const spec = [
      'POST /auth/login', 'POST /auth/logout', 'POST /auth/change-password', 'GET /auth/me',
      'POST /libraries', 'GET /libraries', 'POST /programs', 'GET /programs', 'POST /programs/{id}/versions', 'GET /programs/{id}/versions',
      'POST /versions/{id}/submit', 'GET /programs/{id}/diff', 'GET /versions/{id}/content', 'POST /versions/{id}/obsolete',
      'GET /approvals', 'POST /approvals/{id}/decide',
      'POST /admin/users', 'GET /admin/users', 'POST /admin/service-tokens', 'GET /admin/service-tokens',
      'GET /audit', 'GET /audit/export', 'GET /audit/verify',
    ];
    expect(spec.filter((e) => !have.has(e.replace(' /', ' /api/v1/')))).toEqual([]);
    expect([...have].every((e) => e.split(' ')[1]?.startsWith('/api/v1/'))).toBe(true);
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
