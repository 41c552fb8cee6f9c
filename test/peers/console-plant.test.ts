/**
 * What a first plant pilot asked of the program console, in Chromium
 * against a real program service and gateway: the file name on the machine
 * as its own visible, editable thing (from the program's number; a name the
 * machine's control will not take refused in plain words); every version
 * and approval card offers the whole text (with its encoding, line numbers,
 * line endings on request) and the exact bytes; the whole diff shows every
 * line, comment-only lines included, with unchanged runs folded; an approver
 * is offered no button their role cannot use; validation errors, trial
 * evidence and a library without approvals are said in plant words; a
 * gateway registered on the Gateways page is synced at once, and the page
 * says where its key is made and what it needs. axe-core on each screen.
 * Each test opens its own page and logs in, and what it reads is made for
 * it (in beforeAll or by itself), so each one fails alone on a console
 * without what it checks. Screenshots go to docs/console/.
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessGatewayLink } from '../../core/gateway-link/in-process.js';
import { DEFAULT_RATE_LIMITS } from '../../core/http/rate-limit.js';
import { PROGRAMS_PLUGINS } from '../../core/roles/programs/compose.js';
import { createAccountsPlugin } from '../../plugins/accounts/index.js';
import { createDeploymentsPlugin } from '../../plugins/deployments/index.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { startTestProgramService, TEST_PASSWORD_COST, type TestProgramService } from '../fixtures/programs.js';
import { login, TEST_PROGRAMS_ADMIN_PASSWORD, userSession, type Session } from '../fixtures/programs-accounts.js';
import { launchChromium, noSeriousViolations, openPage } from './browser.js';

const SHOTS = resolve(import.meta.dirname, '../../docs/console');
const DIR = '//CNC_MEM/USER/PATH1/';
/** A tape program with a Windows-1252 comment (Ø is 0xD8), CR LF line endings, and a comment-only line (line 3). */
const lines = (clamp: string, feed: number) => [
  '%', 'O1234 (FLANGE \xd8 25 OP10)', `(CLAMP ON THE ${clamp} JAW)`, 'G21 G90 G54', 'T1 M06', 'S1800 M03',
  ...Array.from({ length: 12 }, (_, i) => `G01 X${i * 5}. Y${i * 2}. F${i === 10 ? feed : 250}`), 'G00 Z50.', 'M30', '%', '',
].join('\r\n');
const V1 = Buffer.from(lines('LEFT', 250), 'latin1');
const V2 = Buffer.from(lines('RIGHT', 300), 'latin1');
const OP20 = Buffer.from('%\nO1240 (FLANGE OP20)\nG90 G54\nG01 X10. F200\nM30\n%\n');
const PLATE = Buffer.from('%\nO1260 (PLATE OP10)\nG90 G54\nG01 X10. F200\nM30\n%\n');

describe('the program console speaks to the plant, in Chromium', { timeout: 180_000 }, () => {
  let gw: TestGateway;
  let second: TestGateway;
  let svc: TestProgramService;
  let browser: Browser;
  let page: Page;
  let admin: Session;
  let arnePassword: string;

  const logIn = async (username: string, password: string) => {
    await expect.poll(() => page.getByRole('dialog').isVisible()).toBe(true);
    await page.getByLabel('User name').fill(username);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
  };
  /** A page of its own (its own cookies), logged in as `username`. */
  const freshPage = async (username: string, password: string) => {
    await page?.context().close();
    page = await openPage(browser, { width: 1280, height: 900 });
    await page.goto(`${svc.url}/`);
    await logIn(username, password);
  };
  const nav = (name: string) => page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true });
  const status = () => page.getByRole('status').textContent();
  const alert = () => page.getByRole('alert').textContent();
  const openProgram = async (name: string) => {
    await nav('Programs').click();
    await page.getByRole('button', { name, exact: true }).click();
  };

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    gw = await startTestGateway({ machines: [simMachine('M1', { name: 'Mill 1', model: '0i-MD' }), simMachine('M2', { name: 'Mill 2' })], communication: { rateLimits: {} } });
    const plugins = PROGRAMS_PLUGINS.map((p) => (p.name === 'accounts' ? createAccountsPlugin({ passwordCost: TEST_PASSWORD_COST }) : p.name === 'deployments' ? createDeploymentsPlugin({ trialRules: { evaluateEverySec: 0.2 } }) : p));
    svc = await startTestProgramService({
      plugins, env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, localGateway: new InProcessGatewayLink(gw.gateway.context.interfaces),
      dataDir: mkdtempSync(join(tmpdir(), 'programs-console-plant-')), rateLimits: DEFAULT_RATE_LIMITS,
    });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    const post = async (path: string, body: unknown) => (await svc.request('POST', path, { cookie: admin.cookie, headers: admin.headers, body })).body;
    const flanges = await post('/api/v1/libraries', { name: 'Flanges', approvalPolicy: { mode: 'approvals', required: 1 } });
    await post('/api/v1/libraries', { name: 'Fixtures', approvalPolicy: { mode: 'autoRelease' } });
    // Two versions waiting for approval, uploaded and submitted by the administrator.
    const flange = await post('/api/v1/programs', { libraryId: flanges.id, name: 'O1234 Flange OP10', controller: 'fanuc' });
    for (const bytes of [V1, V2]) {
      const version = await post(`/api/v1/programs/${flange.id}/versions`, { contentBase64: bytes.toString('base64'), notes: '' });
      await post(`/api/v1/versions/${version.id}/submit`, {});
    }
    for (const m of (await svc.request('GET', '/api/v1/machines', { cookie: admin.cookie })).body.items as { id: string }[]) {
      await svc.request('PATCH', `/api/v1/machines/${m.id}`, { cookie: admin.cookie, headers: admin.headers, body: { programDir: DIR } });
    }
    arnePassword = (await userSession(svc, admin, 'arne', 'approver')).password;
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
    await second?.stop();
    await gw?.stop();
  });

  it('PV-34 the New-program form takes the file name from the program number; a version is uploaded and submitted for approval', async () => {
    await freshPage('admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    await nav('Programs').click();
    await page.getByText('New program').click();
    await page.locator('#new-program-name').fill('O1230 Flange OP05');
    expect(await page.getByLabel('File name on the machines').inputValue()).toBe('O1230');
    await page.getByLabel('Library', { exact: true }).selectOption({ label: 'Flanges' });
    await page.getByRole('button', { name: 'Make the program' }).click();
    await expect.poll(status).toMatch(/Program O1230 Flange OP05 made \(file name on the machines: O1230\)/);
    await page.locator('input[type="file"]').setInputFiles({ name: 'O1230.nc', mimeType: 'text/plain', buffer: V1 });
    await expect.poll(status).toMatch(/Version 1 uploaded/);
    await page.locator('tr[data-version="1"]').getByRole('button', { name: 'Submit for approval' }).click();
    await expect.poll(status).toMatch(/Version 1 submitted for approval/);
  });

  it('PV-31 a version row\'s View shows the whole text as the preview reads it, with line numbers and line endings on request; Download gives the exact bytes', async () => {
    await freshPage('admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    await openProgram('O1234 Flange OP10');
    await page.locator('tr[data-version="1"]').getByRole('button', { name: 'View O1234 Flange OP10 version 1' }).click();
    const text = page.getByRole('region', { name: 'The text of O1234 Flange OP10 version 1' });
    await expect.poll(() => text.locator('[data-encoding]').getAttribute('data-encoding')).toBe('windows-1252');
    expect(await text.textContent()).toMatch(/21 lines, \d+ bytes, read as Windows-1252/);
    const third = text.getByRole('table').locator('tr').nth(2);
    expect(await third.locator('td').allTextContents()).toEqual(['3', '(CLAMP ON THE LEFT JAW)']);
    expect(await text.getByRole('table').locator('tr').nth(1).textContent()).toContain('O1234 (FLANGE Ø 25 OP10)');
    expect(await text.locator('.eol').count()).toBe(0);
    await text.getByLabel('Show line endings').check();
    expect(await text.locator('.eol').count()).toBe(21);
    expect(await text.locator('.eol').first().textContent()).toBe('␍␊');
    await page.screenshot({ path: join(SHOTS, 'version-text.png'), fullPage: true });
    await noSeriousViolations(page, 'version text');
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('tr[data-version="1"]').getByRole('link', { name: 'Download O1234 Flange OP10 version 1' }).click()]);
    expect(download.suggestedFilename()).toBe('O1234_Flange_OP10-v1.nc');
    expect(readFileSync(await download.path()).equals(V1)).toBe(true);
  });

  it('PV-32 an approver reads what they sign: View and Download on the card, a first version too, and the whole diff with every line; no button their role cannot use', async () => {
    await freshPage('arne', arnePassword);
    await nav('Approvals').click();
    const v1 = page.locator('li.card', { hasText: 'O1234 Flange OP10 version 1' });
    await expect.poll(() => v1.textContent()).toMatch(/first version of this program to be published/);
    await v1.getByRole('button', { name: 'View O1234 Flange OP10 version 1' }).click();
    await expect.poll(() => v1.getByRole('region', { name: 'The text of O1234 Flange OP10 version 1' }).textContent()).toContain('(CLAMP ON THE LEFT JAW)');
    expect(await v1.getByRole('link', { name: 'Download O1234 Flange OP10 version 1' }).first().getAttribute('href')).toMatch(/^\/api\/v1\/versions\/ver_\w+\/content$/);
    await page.screenshot({ path: join(SHOTS, 'approval-text.png'), fullPage: true });
    await noSeriousViolations(page, 'approval card with the text');
    await v1.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(status).toMatch(/version 1: approved; the version is now published/);

    // The whole diff of version 2: the changed comment-only line is there, unchanged runs are folded and can be shown.
    const v2 = page.locator('li.card', { hasText: 'O1234 Flange OP10 version 2' });
    await v2.getByRole('link', { name: 'The whole diff, side by side' }).click();
    const diff = page.getByRole('table', { name: 'Version 1 against version 2' });
    await expect.poll(() => diff.locator('td.del').allTextContents()).toEqual(['removed: (CLAMP ON THE LEFT JAW)', 'removed: G01 X50. Y20. F250']);
    expect(await diff.locator('td.add').allTextContents()).toEqual(['added: (CLAMP ON THE RIGHT JAW)', 'added: G01 X50. Y20. F300']);
    const fold = diff.getByRole('button', { name: /^Show 7 unchanged lines \(7–13\)$/ });
    expect(await fold.count()).toBe(1);
    expect(await diff.textContent()).not.toContain('G01 X10. Y4. F250');
    await fold.click();
    await expect.poll(() => diff.textContent()).toContain('G01 X10. Y4. F250');
    await page.screenshot({ path: join(SHOTS, 'diff-all-lines.png'), fullPage: true });
    await noSeriousViolations(page, 'the whole diff');

    // The approver's programs page: View and Download on every row, nothing to upload, submit, deploy or make.
    await openProgram('O1234 Flange OP10');
    await expect.poll(() => page.locator('tr[data-version]').count()).toBe(2);
    expect(await page.locator('tr[data-version="1"]').getByRole('button', { name: /^View/ }).count()).toBe(1);
    for (const name of ['Deploy…', 'Submit for approval', 'Publish']) expect(await page.getByRole('button', { name }).count(), name).toBe(0);
    expect(await page.locator('.drop').count()).toBe(0);
    expect(await page.getByText('New program').count()).toBe(0);
  });

  it('PV-32 an approver is offered nothing on the Drift page their role cannot do (no adopting a machine\'s files); an administrator is', async () => {
    const m1 = ((await svc.request('GET', '/api/v1/machines', { cookie: admin.cookie })).body.items as { id: string; machineId: string }[]).find((m) => m.machineId === 'M1');
    for (const [user, password, offered] of [['admin', TEST_PROGRAMS_ADMIN_PASSWORD, 1], ['arne', arnePassword, 0]] as const) {
      await freshPage(user, password);
      await nav('Drift').click();
      await page.getByLabel('Machine', { exact: true }).selectOption(m1?.id as string);
      await expect.poll(() => page.getByRole('table', { name: 'Files on the machine' }).count()).toBe(1);
      expect(await page.getByRole('button', { name: 'Adopt all' }).count(), user).toBe(offered);
      expect(await page.getByLabel('Adopt into').count(), user).toBe(offered);
    }
  });

  it('PV-34 a file name the machine\'s control will not take is refused in plain words; the assignment form edits the file name and header lines and shows the name they give', async () => {
    await freshPage('admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    await nav('Programs').click();
    await page.getByText('New program').click();
    await page.locator('#new-program-name').fill('Flange OP20');
    expect(await page.getByLabel('File name on the machines').inputValue()).toBe('{program}');
    await page.getByLabel('Library', { exact: true }).selectOption({ label: 'Fixtures' });
    await page.getByRole('button', { name: 'Make the program' }).click();
    await expect.poll(status).toMatch(/Program Flange OP20 made/);
    await page.locator('input[type="file"]').setInputFiles({ name: 'op20.nc', mimeType: 'text/plain', buffer: OP20 });
    await expect.poll(status).toMatch(/Version 1 uploaded/);
    // A library without approvals publishes at once, and the page says so.
    await page.locator('tr[data-version="1"]').getByRole('button', { name: 'Publish' }).click();
    await expect.poll(status).toMatch(/^Version 1 published: it can be deployed now\.$/);
    await page.locator('tr[data-version="1"]').getByRole('button', { name: 'Deploy…' }).click();
    const form = page.getByRole('form', { name: 'New assignment' });
    await form.getByLabel('Assign to').selectOption({ label: 'Mill 1 (M1)' });
    await expect.poll(() => form.locator('[data-file-name]').textContent()).toBe('Flange OP20');
    await form.getByRole('button', { name: 'Add the assignment' }).click();
    await expect.poll(alert).toBe('The file name "Flange OP20" will not do on machine M1 (FANUC 0i-MD): a FANUC control takes only O and its 4-digit program number (O0001 to O9999); 8 digits only on a 0i-F or 30i-B series control.');
    await form.getByLabel('File name on the machine').fill('O1240');
    await form.getByLabel('Header lines (one a line)').fill('(V{version} {sha8})');
    await expect.poll(() => form.locator('[data-file-name]').textContent()).toBe('O1240');
    await page.screenshot({ path: join(SHOTS, 'assignment-file-name.png'), fullPage: true });
    await noSeriousViolations(page, 'the assignment form');
    await form.getByRole('button', { name: 'Add the assignment' }).click();
    const row = page.locator('[data-assignment="Mill 1"]');
    await expect.poll(() => row.locator('[data-file-name]').textContent()).toBe('O1240');
    await row.getByRole('button', { name: 'Change' }).click();
    await row.getByLabel('File name on the machine').fill('O1241');
    await row.getByRole('button', { name: 'Save the assignment' }).click();
    await expect.poll(() => row.locator('[data-file-name]').textContent()).toBe('O1241');
    await row.getByRole('button', { name: 'Preview' }).click();
    const preview = page.getByRole('region', { name: 'Preview of the transformed program' });
    await expect.poll(() => preview.textContent()).toMatch(/Mill 1 receives: O1241, \d+ bytes/);
    expect(await preview.textContent()).toMatch(/\+\(V1 [0-9a-f]{8}\)/);
    await page.getByRole('button', { name: 'Start deployment' }).click();
    await expect.poll(() => page.locator('tr[data-deployment-status="Succeeded"]').count(), { timeout: 20_000 }).toBe(1);
    const file = await gw.request('GET', `/api/file/program/download?machineID=M1&dir=${encodeURIComponent(DIR)}&name=O1241`);
    expect((file.body.data as { content: string }).content).toMatch(/^%\nO1240 \(FLANGE OP20\)\n\(V1 [0-9a-f]{8}\)\n/);
  });

  it('PV-21 a draft in a library without approvals is offered Publish, not Submit for approval, and the page says it is published', async () => {
    const get = async (path: string) => (await svc.request('GET', path, { cookie: admin.cookie })).body;
    const fixtures = (await get('/api/v1/libraries')).items.find((l: { name: string }) => l.name === 'Fixtures');
    const made = await svc.request('POST', '/api/v1/programs', { cookie: admin.cookie, headers: admin.headers, body: { libraryId: fixtures.id, name: 'O1270 Clamp', controller: 'fanuc' } });
    await svc.request('POST', `/api/v1/programs/${made.body.id}/versions`, { cookie: admin.cookie, headers: admin.headers, body: { contentBase64: PLATE.toString('base64'), notes: '' } });
    await freshPage('admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    await openProgram('O1270 Clamp');
    const row = page.locator('tr[data-version="1"]');
    await expect.poll(() => row.getAttribute('data-state')).toBe('draft');
    expect(await row.getByRole('button', { name: 'Submit for approval' }).count()).toBe(0);
    await row.getByRole('button', { name: 'Publish' }).click();
    await expect.poll(status).toBe('Version 1 published: it can be deployed now.');
    await expect.poll(() => row.getAttribute('data-state')).toBe('published');
  });

  it('PV-70 a validation error is said in plant words, not as a list of fields', async () => {
    await freshPage('admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    await nav('Admin').click();
    const form = page.getByRole('form', { name: 'New user' });
    await form.getByLabel('User name').fill('eva');
    await form.getByLabel('Password', { exact: true }).fill('short-pw');
    await form.getByRole('button', { name: 'Add user' }).click();
    await expect.poll(alert).toBe('The password needs at least 10 characters.');
    await noSeriousViolations(page, 'a validation error');
  });

  it('PV-25 a trial\'s evidence is a table: cycles and cycle times before and during it, the change, the alarms', async () => {
    const get = async (path: string) => (await svc.request('GET', path, { cookie: admin.cookie })).body;
    const post = async (path: string, body: unknown) => (await svc.request('POST', path, { cookie: admin.cookie, headers: admin.headers, body })).body;
    // A published version of a program in the library without approvals, assigned to Mill 1.
    const fixtures = (await get('/api/v1/libraries')).items.find((l: { name: string }) => l.name === 'Fixtures');
    const program = await post('/api/v1/programs', { libraryId: fixtures.id, name: 'O1260 Plate OP10', controller: 'fanuc' });
    const version = await post(`/api/v1/programs/${program.id}/versions`, { contentBase64: PLATE.toString('base64'), notes: '' });
    await post(`/api/v1/versions/${version.id}/submit`, {});
    const m1 = (await get('/api/v1/machines')).items.find((m: { machineId: string }) => m.machineId === 'M1');
    const assignment = await post('/api/v1/machine-assignments', { programId: program.id, machineId: m1.id, dir: DIR });
    const trial = await svc.request('POST', '/api/v1/deployments', { cookie: admin.cookie, headers: admin.headers, body: { versionId: version.id, assignmentIds: [assignment.id], isTrial: true, trialHours: 2 } });
    expect(trial.status).toBe(201);
    await expect.poll(async () => (await get('/api/v1/trials')).items[0]?.evidence !== null, { timeout: 20_000 }).toBe(true);
    await freshPage('admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    await nav('Trials').click();
    const evidence = page.getByRole('table', { name: 'Evidence of the trial on Mill 1' });
    await expect.poll(() => evidence.count()).toBe(1);
    expect(await evidence.locator('thead th').allTextContents()).toEqual(['O1260', 'Before the trial', 'During the trial']);
    expect(await evidence.locator('tbody th').allTextContents()).toEqual(['Cycles', 'Median cycle time', 'Read from – to', 'Cycle time change', 'Alarms that judge it']);
    expect(await page.locator('pre.evidence').count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, 'trial-evidence.png'), fullPage: true });
    await noSeriousViolations(page, 'trial evidence');
  });

  it('PV-33 the Gateways page says where a gateway\'s key is made and what it needs; a gateway registered there is synced at once', async () => {
    second = await startTestGateway({ machines: [simMachine('R1', { name: 'Hall 2 mill' }), simMachine('R2', { name: 'Hall 2 lathe' })] });
    const url = await second.gateway.listen({ host: '127.0.0.1', port: 0 });
    const key = ((await second.request('POST', '/api/security/secret-key/create', { username: 'admin', label: 'program service' })).body.data as { key: string }).key;
    await freshPage('admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    await nav('Gateways').click();
    await page.getByText('Where to make the gateway\'s secret key, and what it needs').click();
    const help = page.locator('details.key-help');
    expect(await help.textContent()).toMatch(/fleet console .*System.*Make a key/);
    expect(await help.locator('ul.needs code').allTextContents()).toContain('/api/file/program/upload');
    await page.getByLabel('Name', { exact: true }).fill('hall-2');
    await page.getByLabel('Address').fill(url);
    await page.getByLabel('Secret key').fill(key);
    await page.getByRole('button', { name: 'Register the gateway' }).click();
    await expect.poll(status).toMatch(/^Gateway hall-2 registered and synced: 2 machines added, 0 changed, 0 gone, 0 back, 0 unchanged\.$/);
    await nav('Machines').click();
    await expect.poll(() => page.locator('tr[data-machine="R1"]').count()).toBe(1);
    await nav('Gateways').click();
    await noSeriousViolations(page, 'gateways with the key help');
  });

  it('PV-31 a long program is drawn a page of lines at a time, in its text and in its whole diff, so the browser does not stall on it', async () => {
    // 12,005 lines; version 2 changes line 3 only, so 11,999 unchanged lines follow the change.
    await freshPage('admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    const long = (feed: number) => Buffer.from(['%', 'O1250 (PLATE)', `G01 X0. F${feed}`, ...Array.from({ length: 12_000 }, (_, i) => `G01 X${i}. Y1.`), 'M30', '%', ''].join('\n'));
    await nav('Programs').click();
    await page.getByText('New program').click();
    await page.locator('#new-program-name').fill('O1250 Plate');
    await page.getByLabel('Library', { exact: true }).selectOption({ label: 'Fixtures' });
    await page.getByRole('button', { name: 'Make the program' }).click();
    await expect.poll(status).toMatch(/Program O1250 Plate made/);
    for (const [n, feed] of [[1, 200], [2, 250]] as const) {
      await page.locator('input[type="file"]').setInputFiles({ name: `O1250-v${n}.nc`, mimeType: 'text/plain', buffer: long(feed) });
      await expect.poll(status).toMatch(new RegExp(`Version ${n} uploaded`));
    }
    await page.locator('tr[data-version="2"]').getByRole('button', { name: 'View O1250 Plate version 2' }).click();
    const text = page.getByRole('region', { name: 'The text of O1250 Plate version 2' });
    const rows = text.getByRole('table').locator('tr');
    await expect.poll(() => text.textContent()).toMatch(/12005 lines/);
    expect(await rows.count()).toBe(5000);
    await text.getByRole('button', { name: 'Show lines 5001–10000 of 12005' }).click();
    await expect.poll(() => rows.count()).toBe(10_000);
    await text.getByRole('button', { name: 'Show lines 10001–12005 of 12005' }).click();
    await expect.poll(() => rows.count()).toBe(12_005);
    expect(await rows.last().locator('td').allTextContents()).toEqual(['12005', '%']);
    expect(await text.getByRole('button', { name: /^Show lines/ }).count()).toBe(0);
    await text.getByRole('button', { name: 'Close the text' }).click();

    await page.locator('tr[data-version="2"]').getByRole('button', { name: 'Diff with 1' }).click();
    const diff = page.getByRole('table', { name: 'Version 1 against version 2' });
    await expect.poll(() => diff.locator('td.add').allTextContents()).toEqual(['added: G01 X0. F250']);
    await diff.getByRole('button', { name: 'Show 5000 unchanged lines (7–5006 of 11999)' }).click();
    await expect.poll(() => diff.locator('tbody.unfolded tr').count()).toBe(5000);
    expect(await diff.textContent()).toContain('G01 X5002. Y1.');
    expect(await diff.textContent()).not.toContain('G01 X5003. Y1.');
    await diff.getByRole('button', { name: 'Show 5000 unchanged lines (5007–10006 of 6999)' }).click();
    await diff.getByRole('button', { name: 'Show 1999 unchanged lines (10007–12005)' }).click();
    await expect.poll(() => diff.locator('tbody.unfolded tr').count()).toBe(11_999);
    expect(await diff.locator('tbody.fold').count()).toBe(0);
  });
});
