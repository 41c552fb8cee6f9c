/**
 * The start-up banner tells a first-time user which URLs open without a
 * token and which need `Authorization: Bearer`; the labels must be true of
 * the running gateway, README's sample must be what the banner prints, and
 * the log-in line must name the field the login response really carries.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bannerUrlLines, startupBanner } from '../../core/startup-banner.js';
import { startTestGateway, TEST_ADMIN_PASSWORD, type TestGateway } from '../fixtures/gateway.js';

const ROOT = resolve(import.meta.dirname, '../..');

describe('start-up banner', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw.stop();
  });

  it('each URL is marked "no token" or "Bearer token", and the mark is what the gateway answers without a token', async () => {
    const lines = bannerUrlLines('');
    expect(lines.map((l) => l.match(/ (\/\S*) {2}/)?.[1])).toEqual(
      expect.arrayContaining(['/', '/api/docs', '/api/health', '/api/config/machines', '/mcp']),
    );
    for (const line of lines) {
      const [, path, access] = line.match(/ (\/\S*) {2}\((no token|Bearer token)[;)]/) ?? [];
      expect(path, line).toBeDefined();
      // MCP clients POST JSON-RPC to /mcp; a GET there is 405 before any credential check.
      const res =
        path === '/mcp'
          ? await gw.gateway.http.inject({
              method: 'POST',
              url: path,
              headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
              payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
            })
          : await gw.gateway.http.inject({ method: 'GET', url: path as string });
      if (access === 'no token') expect(res.statusCode, line).not.toBe(401);
      else expect(res.statusCode, line).toBe(401);
    }
  });

  it("README's sample output is the banner's URL block for http://localhost:8080", () => {
    const readme = readFileSync(resolve(ROOT, 'README.md'), 'utf8');
    const expected = bannerUrlLines('http://localhost:8080').join('\n');
    expect(readme).toContain(`\`\`\`\n${expected}\n`);
  });

  it('the log-in line says the response carries "token" at the top level, and it does', async () => {
    const banner = startupBanner({
      version: '0',
      configFile: 'c.json',
      dataDir: 'data',
      timeZone: 'UTC',
      machines: [],
      url: 'http://localhost:8080',
      announcements: gw.gateway.context.announcements,
    });
    expect(banner).toContain('POST /api/auth/login {"username","password"} → {"token": ...}');
    const readme = readFileSync(resolve(ROOT, 'README.md'), 'utf8');
    const loginLine = banner.split('\n').find((l) => l.includes('POST /api/auth/login'));
    expect(readme).toContain(loginLine);
    const res = await gw.request('POST', '/api/auth/login', { username: 'admin', password: TEST_ADMIN_PASSWORD }, { token: null });
    expect(typeof res.body.token).toBe('string');
  });
});
