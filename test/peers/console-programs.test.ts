/**
 * The program service's console in a real browser (Debian's Chromium through
 * playwright-core) against a real program service and gateway: a programmer
 * uploads a version by dropping a file and submits it; trying to approve it
 * themself is refused in plain words (separation of duties); an approver
 * approves it; it is deployed to two simulated machines and both deployments
 * are watched to Succeeded; axe-core finds no serious or critical violation.
 * Screenshots go to docs/console/.
 */
import AxeBuilder from '@axe-core/playwright';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessGatewayLink } from '../../core/gateway-link/in-process.js';
import { PROGRAMS_PLUGINS } from '../../plugins/index.js';
import { createAccountsPlugin } from '../../plugins/accounts/index.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { startTestProgramService, TEST_PASSWORD_COST, type TestProgramService } from '../fixtures/programs.js';
import { login, TEST_PROGRAMS_ADMIN_PASSWORD, userSession, type Session } from '../fixtures/programs-accounts.js';
import { launchChromium } from './browser.js';

const SHOTS = resolve(import.meta.dirname, '../../docs/console');
const DIR = '//CNC_MEM/USER/PATH1/';
const PROGRAM = '%\nO4001 (SHAFT)\nG21 G90 G54\nT1 M06\nS1200 M03\nG00 X0. Y0.\nG01 Z-2. F150\nM30\n%\n';

async function noSeriousViolations(page: Page, what: string): Promise<void> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  const serious = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.length} nodes, e.g. ${v.nodes[0]?.target.join(' ')})`), what).toEqual([]);
}

describe('program console in Chromium', { timeout: 120_000 }, () => {
  let gw: TestGateway;
  let svc: TestProgramService;
  let browser: Browser;
  let page: Page;
  let admin: Session;
  const users: Record<string, string> = {};

  const logIn = async (username: string, password: string) => {
    await expect.poll(() => page.getByRole('dialog').isVisible()).toBe(true);
    await page.getByLabel('User name').fill(username);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
  };
  const logOut = async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await expect.poll(() => page.getByRole('dialog').isVisible()).toBe(true);
  };

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    gw = await startTestGateway({ machines: [simMachine('M1', { name: 'Mill 1' }), simMachine('M2', { name: 'Mill 2' })] });
    const plugins = PROGRAMS_PLUGINS.map((p) => (p.name === 'accounts' ? createAccountsPlugin({ passwordCost: TEST_PASSWORD_COST }) : p));
    svc = await startTestProgramService({
      plugins, env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, localGateway: new InProcessGatewayLink(gw.gateway.context.interfaces),
      dataDir: mkdtempSync(join(tmpdir(), 'programs-console-')),
    });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    const post = async (path: string, body: unknown) => (await svc.request('POST', path, { cookie: admin.cookie, headers: admin.headers, body })).body;
    const lib = await post('/api/v1/libraries', { name: 'Shafts', approvalPolicy: { mode: 'approvals', required: 1 } });
    const program = await post('/api/v1/programs', { libraryId: lib.id, name: 'SHAFT', controller: 'fanuc' });
    const machines = (await svc.request('GET', '/api/v1/machines', { cookie: admin.cookie })).body.items as { id: string; machineId: string }[];
    for (const m of machines) await post('/api/v1/machine-assignments', { programId: program.id, machineId: m.id, dir: DIR });
    for (const [name, role] of [['paula', 'programmer'], ['arne', 'approver']] as const) users[name] = (await userSession(svc, admin, name, role, { libraries: '*', machineGroups: '*' })).password;
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
    page.setDefaultTimeout(10_000);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
    await gw?.stop();
  });

  it('PV-01 a programmer uploads a version by dropping a file and submits it', async () => {
    await page.goto(`${svc.url}/`);
    await logIn('paula', users.paula as string);
    await page.getByRole('button', { name: 'SHAFT' }).click();
    // Drop a file on the drop zone, as a person drags it from the desktop (a page-side script: it builds the browser's DataTransfer).
    const drop = await page.evaluateHandle(`(() => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([${JSON.stringify(PROGRAM)}], 'O4001.nc', { type: 'text/plain' }));
      return transfer;
    })()`);
    await page.locator('.drop').dispatchEvent('drop', { dataTransfer: drop });
    await expect.poll(() => page.getByRole('status').textContent()).toMatch(/Version 1 uploaded/);
    const row = page.locator('tr[data-version="1"]');
    expect(await row.getAttribute('data-state')).toBe('draft');
    await noSeriousViolations(page, 'programs');
    await row.getByRole('button', { name: 'Submit' }).click();
    await expect.poll(() => row.getAttribute('data-state')).toBe('submitted');
    await page.screenshot({ path: join(SHOTS, 'programs.png'), fullPage: true });
    await logOut();
  });

  it('PV-01 whoever uploaded and submitted a version is refused its approval, in plain words', async () => {
    await logIn('admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'SHAFT' }).click();
    // The file picker, this time.
    await page.locator('input[type="file"]').setInputFiles({ name: 'O4001-v2.nc', mimeType: 'text/plain', buffer: Buffer.from(PROGRAM.replace('F150', 'F180')) });
    await expect.poll(() => page.getByRole('status').textContent()).toMatch(/Version 2 uploaded/);
    await page.locator('tr[data-version="2"]').getByRole('button', { name: 'Submit' }).click();
    await expect.poll(() => page.locator('tr[data-version="2"]').getAttribute('data-state')).toBe('submitted');
    await page.getByRole('link', { name: 'Approvals' }).click();
    const v2 = page.locator('li.card', { hasText: 'SHAFT version 2' });
    await v2.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/^Not allowed: admin .*may not decide on it/);
    await page.screenshot({ path: join(SHOTS, 'approval-refused.png'), fullPage: true });
    await noSeriousViolations(page, 'approvals');
    await logOut();
  });

  it('PV-01 an approver approves version 1, and the programmer deploys it to two machines, each watched to Succeeded', async () => {
    await logIn('arne', users.arne as string);
    const v1 = page.locator('li.card', { hasText: 'SHAFT version 1' });
    await page.getByRole('link', { name: 'Approvals' }).click();
    await v1.getByLabel('Comment').fill('checked feeds and tools');
    await v1.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toMatch(/SHAFT version 1: approved; the version is now published/);
    await logOut();
    await logIn('paula', users.paula as string);
    await page.getByRole('link', { name: 'Programs' }).click();
    await page.getByRole('button', { name: 'SHAFT' }).click();
    await page.locator('tr[data-version="1"]').getByRole('button', { name: 'Deploy…' }).click();
    await expect.poll(() => page.getByRole('checkbox').count()).toBe(2);
    await page.getByRole('button', { name: 'Start deployment' }).click();
    await expect.poll(() => page.locator('tr[data-deployment-status="Succeeded"]').count(), { timeout: 20_000 }).toBe(2);
    await page.screenshot({ path: join(SHOTS, 'deployment.png'), fullPage: true });
    await noSeriousViolations(page, 'deployment');
    // What the page showed is on the machines.
    for (const id of ['M1', 'M2']) {
      const file = await gw.request('GET', `/api/file/program/download?machineID=${id}&dir=${encodeURIComponent(DIR)}&name=SHAFT`);
      expect((file.body.data as { content: string }).content).toBe(PROGRAM);
    }
  });
});
