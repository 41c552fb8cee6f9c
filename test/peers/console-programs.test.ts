/**
 * The program service's console in a real browser (Debian's Chromium through
 * playwright-core) against a real program service and gateway: a programmer
 * uploads a version by dropping a file and submits it; trying to approve it
 * themself is refused in plain words (separation of duties); an approver
 * approves it; it is deployed to two simulated machines and both deployments
 * are watched to Succeeded; axe-core finds no serious or critical violation.
 * Screenshots go to docs/console/.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessGatewayLink } from '../../core/gateway-link/in-process.js';
import { DEFAULT_RATE_LIMITS } from '../../core/http/rate-limit.js';
import { PROGRAMS_PLUGINS } from '../../core/roles/programs/compose.js';
import { createAccountsPlugin } from '../../plugins/accounts/index.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { startTestProgramService, TEST_PASSWORD_COST, type TestProgramService } from '../fixtures/programs.js';
import { login, TEST_PROGRAMS_ADMIN_PASSWORD, userSession, type Session } from '../fixtures/programs-accounts.js';
import { launchChromium, noSeriousViolations, openPage } from './browser.js';

const SHOTS = resolve(import.meta.dirname, '../../docs/console');
const DIR = '//CNC_MEM/USER/PATH1/';
const PROGRAM = '%\nO4001 (SHAFT)\nG21 G90 G54\nT1 M06\nS1200 M03\nG00 X0. Y0.\nG01 Z-2. F150\nM30\n%\n';

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
    // The default request limits, as a user runs the consoles: they must stay under them.
    gw = await startTestGateway({ machines: [simMachine('M1', { name: 'Mill 1' }), simMachine('M2', { name: 'Mill 2' })], communication: { rateLimits: {} } });
    const plugins = PROGRAMS_PLUGINS.map((p) => (p.name === 'accounts' ? createAccountsPlugin({ passwordCost: TEST_PASSWORD_COST }) : p));
    svc = await startTestProgramService({
      plugins, env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, localGateway: new InProcessGatewayLink(gw.gateway.context.interfaces),
      dataDir: mkdtempSync(join(tmpdir(), 'programs-console-')), rateLimits: DEFAULT_RATE_LIMITS,
    });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    const post = async (path: string, body: unknown) => (await svc.request('POST', path, { cookie: admin.cookie, headers: admin.headers, body })).body;
    const lib = await post('/api/v1/libraries', { name: 'Shafts', approvalPolicy: { mode: 'approvals', required: 1 } });
    // Named for people; filed on the FANUCs by its program number.
    const program = await post('/api/v1/programs', { libraryId: lib.id, name: 'SHAFT', controller: 'fanuc', fileName: 'O4001' });
    const machines = (await svc.request('GET', '/api/v1/machines', { cookie: admin.cookie })).body.items as { id: string; machineId: string }[];
    for (const m of machines) await post('/api/v1/machine-assignments', { programId: program.id, machineId: m.id, dir: DIR });
    for (const [name, role] of [['paula', 'programmer'], ['arne', 'approver']] as const) users[name] = (await userSession(svc, admin, name, role, { libraries: '*', machineGroups: '*' })).password;
    browser = await launchChromium();
    page = await openPage(browser, { width: 1280, height: 860 });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
    await gw?.stop();
  });

  it('PV-01 a programmer uploads a version by dropping a file and submits it', async () => {
    await page.goto(`${svc.url}/`);
    await logIn('paula', users.paula as string);
    await page.getByRole('link', { name: 'Programs' }).click();
    await page.getByRole('button', { name: 'SHAFT', exact: true }).click();
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
    await row.getByRole('button', { name: 'Submit for approval' }).click();
    await expect.poll(() => row.getAttribute('data-state')).toBe('submitted');
    await page.screenshot({ path: join(SHOTS, 'programs.png'), fullPage: true });
    await logOut();
  });

  it('PV-01 whoever uploaded and submitted a version is refused its approval, in plain words', async () => {
    await logIn('admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    await page.getByRole('link', { name: 'Programs' }).click();
    await page.getByRole('button', { name: 'SHAFT', exact: true }).click();
    // The file picker, this time.
    await page.locator('input[type="file"]').setInputFiles({ name: 'O4001-v2.nc', mimeType: 'text/plain', buffer: Buffer.from(PROGRAM.replace('F150', 'F180')) });
    await expect.poll(() => page.getByRole('status').textContent()).toMatch(/Version 2 uploaded/);
    await page.locator('tr[data-version="2"]').getByRole('button', { name: 'Submit for approval' }).click();
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
    await page.getByRole('button', { name: 'SHAFT', exact: true }).click();
    await page.locator('tr[data-version="1"]').getByRole('button', { name: 'Deploy…' }).click();
    await expect.poll(() => page.locator('[data-assignment]').count()).toBe(2);
    // What the first machine would receive, before anything is sent.
    await page.getByRole('button', { name: 'Preview' }).first().click();
    await expect.poll(() => page.getByRole('region', { name: 'Preview of the transformed program' }).textContent()).toMatch(/receives: O4001, \d+ bytes/);
    await page.getByRole('button', { name: 'Start deployment' }).click();
    await expect.poll(() => page.locator('tr[data-deployment-status="Succeeded"]').count(), { timeout: 20_000 }).toBe(2);
    await page.screenshot({ path: join(SHOTS, 'deployment.png'), fullPage: true });
    await noSeriousViolations(page, 'deployment');
    // What the page showed is on the machines.
    for (const id of ['M1', 'M2']) {
      const file = await gw.request('GET', `/api/file/program/download?machineID=${id}&dir=${encodeURIComponent(DIR)}&name=O4001`);
      expect((file.body.data as { content: string }).content).toBe(PROGRAM);
    }
  });

  it('PV-01 the NC-aware diff of two versions, side by side, highlights what changes on the machine', async () => {
    await page.locator('tr[data-version="2"]').getByRole('button', { name: 'Diff with 1' }).click();
    const summary = page.getByRole('region', { name: 'What changes on the machine' });
    await expect.poll(() => summary.textContent()).toMatch(/Feeds.*150 → 180 \(\+20\.0 %\)/);
    expect(await page.locator('table.side-by-side td.del').first().textContent()).toContain('F150');
    expect(await page.locator('table.side-by-side td.add').first().textContent()).toContain('F180');
    await page.screenshot({ path: join(SHOTS, 'diff.png'), fullPage: true });
    await noSeriousViolations(page, 'diff');
    await logOut();
  });

  it('PV-01 a file changed behind the service\'s back shows up as drift; accepting it makes a draft version and changes nothing released', async () => {
    // An edit at the machine: the gateway's own upload interface, not the service.
    const edited = PROGRAM.replace('S1200', 'S1500');
    expect((await gw.request('POST', '/api/file/program/upload', { machineID: 'M1', dir: DIR, name: 'O4001', content: edited })).body.errorCode).toBe(0);
    const m1 = ((await svc.request('GET', '/api/v1/machines', { cookie: admin.cookie })).body.items as { id: string; machineId: string }[]).find((m) => m.machineId === 'M1');
    expect((await svc.request('POST', `/api/v1/machines/${m1?.id}/request-checkin`, { cookie: admin.cookie, headers: admin.headers, body: { wait: true } })).status).toBe(200);
    await logIn('paula', users.paula as string);
    await page.getByRole('link', { name: 'Drift' }).click();
    await expect.poll(() => page.locator('tr[data-drift]').count()).toBe(1);
    await page.getByRole('button', { name: 'Review…' }).click();
    await expect.poll(() => page.locator('pre.unified .add').first().textContent()).toContain('S1500');
    await page.screenshot({ path: join(SHOTS, 'drift.png'), fullPage: true });
    await noSeriousViolations(page, 'drift');
    await page.getByLabel('Note').fill('faster spindle tried at the machine');
    await page.getByRole('button', { name: "Accept the machine's version" }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toMatch(/is now draft version .*needs approval/);
    // The list is read again after the notice shows.
    await expect.poll(() => page.locator('tr[data-drift]').count()).toBe(0);
    await page.getByRole('link', { name: 'Programs' }).click();
    await page.getByRole('button', { name: 'SHAFT', exact: true }).click();
    await expect.poll(() => page.locator('tr[data-version="3"]').getAttribute('data-state')).toBe('draft');
    expect(await page.locator('tr[data-version="1"]').getAttribute('data-state')).toBe('published');
  });

  it('PV-01 a machine\'s files with their snapshots; an earlier snapshot is put back on the machine', async () => {
    await page.getByRole('link', { name: 'Drift' }).click();
    const m1 = ((await svc.request('GET', '/api/v1/machines', { cookie: admin.cookie })).body.items as { id: string; machineId: string }[]).find((m) => m.machineId === 'M1');
    await page.getByLabel('Machine', { exact: true }).selectOption(m1?.id as string);
    const row = page.locator('tr[data-file="O4001"]');
    await row.getByRole('button', { name: 'Snapshots' }).click();
    const snaps = page.getByRole('region', { name: 'Snapshots of O4001' });
    await expect.poll(() => snaps.getByRole('button', { name: 'Restore' }).count()).toBeGreaterThanOrEqual(1);
    await page.screenshot({ path: join(SHOTS, 'files.png'), fullPage: true });
    const sha = (await snaps.locator('tbody tr').last().locator('code').textContent()) as string;
    await snaps.getByRole('button', { name: 'Restore' }).last().click();
    await expect.poll(() => page.getByRole('status').textContent()).toMatch(/going back on the machine/);
    // The restore is a deployment like any other, verified by reading the file back.
    await expect.poll(async () => ((await svc.request('GET', '/api/v1/deployments?purpose=restore', { cookie: admin.cookie })).body.items as { status: string }[]).map((d) => d.status).join(), { timeout: 15_000 }).toBe('Succeeded');
    const onMachine = (await gw.request('GET', `/api/file/program/download?machineID=M1&dir=${encodeURIComponent(DIR)}&name=O4001`)).body.data as { content: string };
    expect(createHash('sha256').update(onMachine.content).digest('hex').startsWith(sha)).toBe(true);
  });

  it('PV-01 the audit lists what happened and its chain verifies intact', async () => {
    await logOut();
    await logIn('admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    await page.getByRole('link', { name: 'Audit' }).click();
    await expect.poll(() => page.locator('tr[data-action]').count()).toBeGreaterThan(5);
    await page.getByRole('button', { name: 'Verify the chain' }).click();
    await expect.poll(() => page.locator('[data-intact]').getAttribute('data-intact')).toBe('true');
    expect(await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href')).toBe('/api/v1/audit/export?format=csv');
    await page.screenshot({ path: join(SHOTS, 'audit.png'), fullPage: true });
    await noSeriousViolations(page, 'audit');
  });

  it('PV-01 the overview counts what needs attention, each counter leading to its list; a service token made in Admin is shown once', async () => {
    await page.getByRole('link', { name: 'Overview' }).click();
    await expect.poll(() => page.locator('[data-counter="pendingApprovals"] .n').textContent()).toBe('1');
    await page.screenshot({ path: join(SHOTS, 'overview.png'), fullPage: true });
    await noSeriousViolations(page, 'overview');
    await page.locator('[data-counter="pendingApprovals"]').click();
    await expect.poll(() => page.locator('li.card[data-approval]').count()).toBe(1);
    await page.getByRole('link', { name: 'Admin' }).click();
    await page.getByLabel('Name', { exact: true }).fill('mes-link');
    await page.getByRole('button', { name: 'Make a token' }).click();
    const shown = await page.locator('[data-secret]').textContent();
    expect(shown).toMatch(/^pvs_/);
    await page.screenshot({ path: join(SHOTS, 'admin.png'), fullPage: true });
    await noSeriousViolations(page, 'admin');
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.locator('[data-secret]').count()).toBe(0);
    // Listed afterwards, never with its secret.
    expect(await page.getByRole('table', { name: 'Service tokens' }).textContent()).toContain('mes-link');
    expect(await page.content()).not.toContain(shown as string);
  });

  it('PV-01 at the terminal an operator sees what runs against what was released and pulls a trial back; the audit names the operator', async () => {
    const post = async (path: string, body: unknown) => svc.request('POST', path, { cookie: admin.cookie, headers: admin.headers, body });
    // Version 2 approved by the approver, then deployed to M2 as a trial.
    const approvals = (await svc.request('GET', '/api/v1/approvals?state=pending', { cookie: admin.cookie })).body.items as { id: string; versionNumber: number }[];
    const arne = await login(svc, 'arne', users.arne as string);
    const v2 = approvals.find((a) => a.versionNumber === 2);
    expect((await svc.request('POST', `/api/v1/approvals/${v2?.id}/decide`, { cookie: arne.cookie, headers: arne.headers, body: { decision: 'approve', comment: '' } })).status).toBe(200);
    const program = ((await svc.request('GET', '/api/v1/programs', { cookie: admin.cookie })).body.items as { id: string; name: string }[]).find((p) => p.name === 'SHAFT');
    const versions = (await svc.request('GET', `/api/v1/programs/${program?.id}/versions`, { cookie: admin.cookie })).body.items as { id: string; number: number }[];
    const machines = (await svc.request('GET', '/api/v1/machines', { cookie: admin.cookie })).body.items as { id: string; machineId: string }[];
    const m2 = machines.find((m) => m.machineId === 'M2');
    const assignments = (await svc.request('GET', `/api/v1/machine-assignments?programId=${program?.id}`, { cookie: admin.cookie })).body.items as { id: string; machineId: string }[];
    const trial = await post('/api/v1/deployments', { versionId: versions.find((v) => v.number === 2)?.id, assignmentIds: [assignments.find((a) => a.machineId === m2?.id)?.id], isTrial: true, trialHours: 4 });
    expect(trial.status).toBe(201);

    await page.goto(`${svc.url}/terminal`);
    await expect.poll(() => page.getByLabel('Machine').locator('option').count()).toBe(3);
    await page.getByLabel('Machine').selectOption(m2?.id as string);
    await expect.poll(() => page.getByRole('heading', { name: /^Trial: O4001/ }).count(), { timeout: 15_000 }).toBe(1);
    // Without a name the terminal refuses to act: the record must name a person.
    await page.getByRole('button', { name: 'Bad — pull it back' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/Enter your name first/);
    await page.getByLabel('Your name').fill('Olga Operator');
    await page.getByRole('button', { name: 'Request check-in' }).click();
    await expect.poll(() => page.locator('[data-matches]').getAttribute('data-matches'), { timeout: 15_000 }).toMatch(/true|false|null/);
    await page.screenshot({ path: join(SHOTS, 'terminal.png'), fullPage: true });
    await noSeriousViolations(page, 'terminal');
    await page.getByLabel('What did you see?').fill('chatter on the finishing pass');
    await page.getByRole('button', { name: 'Bad — pull it back' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toMatch(/Pulled back/);
    const audit = (await svc.request('GET', '/api/v1/audit?entityType=trial&limit=50', { cookie: admin.cookie })).body.items as { action: string; onBehalfOf: string | null; principalName: string }[];
    expect(audit.find((r) => r.action === 'trial.pull-back')).toMatchObject({ onBehalfOf: 'Olga Operator', principalName: 'admin' });
  });

  it('PV-01 from an empty library to a machine, in the browser only: a library, a program, its first version, an assignment, a deployment', async () => {
    await page.goto(`${svc.url}/#/programs`);
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    await page.getByText('New library').click();
    await page.locator('#new-library-name').fill('Brackets');
    await page.getByLabel('Approvals before a version is published').selectOption('0');
    await page.getByRole('button', { name: 'Make the library' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toMatch(/Library Brackets made/);
    await page.getByText('New program').click();
    // The file name follows the program number while the name is typed.
    await page.locator('#new-program-name').fill('O5001 BRKT');
    expect(await page.getByLabel('File name on the machines').inputValue()).toBe('O5001');
    await page.getByLabel('Library', { exact: true }).selectOption({ label: 'Brackets' });
    await page.getByRole('button', { name: 'Make the program' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toMatch(/Program O5001 BRKT made \(file name on the machines: O5001\)/);
    await page.locator('input[type="file"]').setInputFiles({ name: 'O5001.nc', mimeType: 'text/plain', buffer: Buffer.from('%\nO5001 (BRKT)\nG90 G54\nM30\n%\n') });
    await expect.poll(() => page.getByRole('status').textContent()).toMatch(/Version 1 uploaded/);
    // Auto-release: published at once, and said so.
    await page.locator('tr[data-version="1"]').getByRole('button', { name: 'Publish' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toMatch(/Version 1 published: it can be deployed now/);
    await expect.poll(() => page.locator('tr[data-version="1"]').getAttribute('data-state')).toBe('published');
    await page.locator('tr[data-version="1"]').getByRole('button', { name: 'Deploy…' }).click();
    const m1 = ((await svc.request('GET', '/api/v1/machines', { cookie: admin.cookie })).body.items as { id: string; machineId: string }[]).find((m) => m.machineId === 'M1');
    await page.getByLabel('Assign to').selectOption(`machine:${m1?.id}`);
    await page.getByLabel('Directory', { exact: true }).fill(DIR);
    // The assignment takes the program's file name, and the form shows the name the machine gets.
    await expect.poll(() => page.getByRole('form', { name: 'New assignment' }).locator('[data-file-name]').textContent()).toBe('O5001');
    await page.getByRole('button', { name: 'Add the assignment' }).click();
    await expect.poll(() => page.locator('[data-assignment]').count()).toBe(1);
    await page.getByRole('button', { name: 'Start deployment' }).click();
    await expect.poll(() => page.locator('tr[data-deployment-status="Succeeded"]').count(), { timeout: 20_000 }).toBe(1);
    const file = await gw.request('GET', `/api/file/program/download?machineID=M1&dir=${encodeURIComponent(DIR)}&name=O5001`);
    expect((file.body.data as { content: string }).content).toContain('O5001 (BRKT)');
  });

  it('PV-01 an administrator gives a user a role and one library in Admin; a session that ends brings the login back over the page, and what was typed stays', async () => {
    await page.goto(`${svc.url}/#/admin`);
    await page.locator('tr[data-user="paula"]').getByRole('button', { name: 'Edit' }).click();
    const editor = page.getByRole('form', { name: 'Edit paula' });
    await editor.getByLabel('Role').selectOption('approver');
    await editor.getByRole('group', { name: 'Libraries' }).getByLabel('all').uncheck();
    await editor.getByRole('group', { name: 'Libraries' }).getByLabel('Shafts').check();
    await editor.getByRole('button', { name: 'Save paula' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toMatch(/paula: saved/);
    // The list is read again after the notice shows.
    await expect.poll(() => page.locator('tr[data-user="paula"]').textContent()).toMatch(/approver.*Shafts/);
    await noSeriousViolations(page, 'admin with the user editor');

    // The browser's session ends (the user changed their password elsewhere) while something is typed.
    await page.getByLabel('Name', { exact: true }).fill('half-typed token name');
    const elsewhere = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    expect((await svc.request('POST', '/api/v1/auth/change-password', { cookie: elsewhere.cookie, headers: elsewhere.headers, body: { currentPassword: TEST_PROGRAMS_ADMIN_PASSWORD, newPassword: 'admin-password-456' } })).status).toBe(204);
    await page.getByRole('button', { name: 'Make a token' }).click();
    await expect.poll(() => page.getByRole('dialog').isVisible()).toBe(true);
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('User name').fill('admin');
    await dialog.getByLabel('Password', { exact: true }).fill('admin-password-456');
    await dialog.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    // The call that met the 401 went on after the login: the token was made, with what had been typed.
    await expect.poll(() => page.locator('[data-secret]').count()).toBe(1);
    await expect.poll(() => page.getByRole('table', { name: 'Service tokens' }).textContent()).toContain('half-typed token name');
  });
});
