/**
 * The security headers of every role's answers (core/http/response-headers.ts):
 * nosniff on every answer, no-store on every answer without a cache policy
 * of its own (authenticated JSON above all), and on the API reference's
 * Swagger UI page (gateway and program service) the page policy, frame
 * protection and Referrer-Policy that the consoles have.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudRole } from '../../core/roles/cloud/role.js';
import { DOCS_CSP } from '../../core/http/response-headers.js';
import { startTestCloud } from '../fixtures/cloud.js';
import { startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { startTestProgramService, type TestProgramService } from '../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD } from '../fixtures/programs-accounts.js';

type Headers = Record<string, string | string[] | number | undefined>;

const expectPageHeaders = (headers: Headers, what: string) => {
  expect(headers['content-security-policy'], what).toBe(DOCS_CSP);
  expect(headers['x-frame-options'], what).toBe('DENY');
  expect(headers['referrer-policy'], what).toBe('no-referrer');
  expect(headers['x-content-type-options'], what).toBe('nosniff');
};

describe('the response headers of every role', () => {
  let gw: TestGateway;
  let svc: TestProgramService;
  let cloud: CloudRole;

  beforeAll(async () => {
    gw = await startTestGateway();
    svc = await startTestProgramService({ plugins: [TEST_ACCOUNTS], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD } });
    cloud = await startTestCloud();
  });
  afterAll(async () => {
    await gw?.stop();
    await svc?.stop();
    await cloud?.stop();
  });

  it("the gateway's Swagger UI at /api/docs has a page policy without inline scripts, frame protection, nosniff and Referrer-Policy; the document and the console keep theirs", async () => {
    const page = await gw.gateway.http.inject({ method: 'GET', url: '/api/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expectPageHeaders(page.headers, '/api/docs/');
    expect(page.body).not.toMatch(/<script>(?!\s*<\/script>)|<script(?![^>]*\bsrc=)[^>]*>\s*\S/);
    const asset = await gw.gateway.http.inject({ method: 'GET', url: '/api/docs/static/swagger-initializer.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['x-content-type-options']).toBe('nosniff');
    const doc = await gw.gateway.http.inject({ method: 'GET', url: '/api/openapi.json' });
    expect(doc.headers['x-content-type-options']).toBe('nosniff');
    const consolePage = await gw.gateway.http.inject({ method: 'GET', url: '/' });
    expect(consolePage.statusCode).toBe(200);
    expect(consolePage.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(consolePage.headers['content-security-policy']).not.toBe(DOCS_CSP);
    expect(consolePage.headers['cache-control']).toBe('no-cache');
  });

  it('every gateway answer carries nosniff, and authenticated JSON no-store, errors included', async () => {
    const machines = await gw.gateway.http.inject({ method: 'GET', url: '/api/config/machines', headers: { authorization: `Bearer ${gw.adminToken}` } });
    expect(machines.statusCode).toBe(200);
    expect(machines.headers['content-type']).toMatch(/^application\/json/);
    expect(machines.headers['x-content-type-options']).toBe('nosniff');
    expect(machines.headers['cache-control']).toBe('no-store');
    for (const url of ['/api/config/machines', '/api/no-such-interface', '/healthz']) {
      const res = await gw.gateway.http.inject({ method: 'GET', url });
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
      expect(res.headers['cache-control'], url).toBe('no-store');
    }
  });

  it("the program service's Swagger UI at /api/docs has the same page headers, and its authenticated JSON no-store and nosniff", async () => {
    const page = await svc.role.context.http.inject({ method: 'GET', url: '/api/docs/' });
    expect(page.statusCode).toBe(200);
    expectPageHeaders(page.headers, 'program service /api/docs/');
    const admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    const me = await fetch(`${svc.url}/api/v1/auth/me`, { headers: { cookie: admin.cookie } });
    expect(me.status).toBe(200);
    expect(me.headers.get('cache-control')).toBe('no-store');
    expect(me.headers.get('x-content-type-options')).toBe('nosniff');
    const problem = await fetch(`${svc.url}/api/v1/auth/me`);
    expect(problem.status).toBe(401);
    expect(problem.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it("the cloud's answers carry nosniff and no-store too", async () => {
    const url = await cloud.listen('127.0.0.1', 0);
    for (const path of ['/admin/gateway-tokens', '/mcp', '/healthz']) {
      const res = await fetch(`${url}${path}`);
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.headers.get('cache-control'), path).toBe('no-store');
    }
  });
});
