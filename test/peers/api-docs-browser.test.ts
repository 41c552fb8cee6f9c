/**
 * The API reference (Swagger UI at /api/docs) of the gateway and of the
 * program service renders in Debian's Chromium under the page policy the
 * runtime gives it (core/http/response-headers.ts): the title and the operations
 * are shown, and the browser reports no Content-Security-Policy violation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium, openPage } from './browser.js';
import { startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { startTestProgramService, type TestProgramService } from '../fixtures/programs.js';
import { TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD } from '../fixtures/programs-accounts.js';

describe('the API reference under its page policy', () => {
  let browser: Browser;
  let gw: TestGateway;
  let gwUrl: string;
  let svc: TestProgramService;

  beforeAll(async () => {
    browser = await launchChromium();
    gw = await startTestGateway();
    gwUrl = await gw.gateway.listen({ host: '127.0.0.1', port: 0 });
    svc = await startTestProgramService({ plugins: [TEST_ACCOUNTS], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD } });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await svc?.stop();
  });

  const render = async (base: string, title: string, operation: string) => {
    const page = await openPage(browser, { width: 1280, height: 900 });
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    // Swagger UI's bundle is 1.4 MB of script: on a loaded machine the page takes seconds.
    const answer = await page.goto(`${base}/api/docs/`, { timeout: 60_000 });
    expect(answer?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    await page.locator('.swagger-ui .information-container .title').filter({ hasText: title }).waitFor({ timeout: 30_000 });
    await page.locator('.opblock-summary-path').filter({ hasText: operation }).first().waitFor({ timeout: 30_000 });
    expect(violations).toEqual([]);
    await page.context().close();
  };

  it("the gateway's reference shows its title and operations with no policy violation", async () => {
    await render(gwUrl, 'CNC machine gateway', '/api/config/machines');
  }, 120_000);

  it("the program service's reference shows its title and operations with no policy violation", async () => {
    await render(svc.url, 'Program version service', '/api/v1/auth/login');
  }, 120_000);
});
