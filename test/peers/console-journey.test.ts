/**
 * A first-time user's journey through the program console, in Chromium,
 * from the composition `npm start` runs (config/default.json: the simulated
 * demo fleet and the program service, started as roles) with no call to the
 * program service's API by the test: an administrator makes a user, a
 * library and a program, uploads and submits two versions; the second user
 * approves them, seeing what the second changes on the machine against the
 * version in force; the administrator deploys to two demo machines without
 * setting a directory, edits and removes an assignment, starts a trial and
 * pulls it back, obsoletes a version, registers and syncs a second gateway;
 * and the terminal, on a phone-sized screen, shows that the machine runs the
 * deployed program. axe-core on each page; no request answered 404, and
 * the approver meets no refusal just by using the console. Screenshots go to
 * docs/console/.
 */
import { readFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRoles, type RunningRoles } from '../../core/runtime/role.js';
import { parseConfig, ROLES } from '../../core/roles/index.js';
import { rolesBanner } from '../../core/runtime/startup-banner.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { launchChromium, noSeriousViolations, openPage } from './browser.js';

/** expect.poll with room for this composition's production password hashing on a loaded machine (its default waits 1 s). */
const poll = <T,>(fn: () => Promise<T> | T, options: { timeout?: number } = {}) => expect.poll(fn, { timeout: 15_000, ...options });

const SHOTS = resolve(import.meta.dirname, '../../docs/console');
const ADMIN_PASSWORD = 'journey-admin-password-1';
const ARNE_PASSWORD = 'arne-approves-42';
const V1 = '%\nO2000 (FLANGE)\nG21 G90 G54\nT1 M06\nS1800 M03\nG00 X0. Y0.\nG01 Z-2. F250\nM30\n%\n';
const V2 = '%\nO2000 (FLANGE)\nG21 G90 G55\nT2 M06\nS1800 M03\nG00 X0. Y0.\nG01 Z-2. F300\nM08\nM30\n%\n';

describe('the program console from npm start\'s demo, in Chromium', { timeout: 300_000 }, () => {
  let roles: RunningRoles;
  let programsUrl: string;
  let second: TestGateway;
  let secondUrl: string;
  let secondKey: string;
  let browser: Browser;
  let page: Page;
  const notFound: string[] = [];
  const refused: string[] = [];

  const logIn = async (username: string, password: string) => {
    await poll(() => page.getByRole('dialog').isVisible()).toBe(true);
    await page.getByLabel('User name').fill(username);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await poll(() => page.getByRole('dialog').count()).toBe(0);
  };
  const logOut = async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await poll(() => page.getByRole('dialog').isVisible()).toBe(true);
  };
  const nav = (name: string) => page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true });
  const status = () => page.getByRole('status').textContent();
  const openProgram = async () => {
    await nav('Programs').click();
    await page.getByRole('button', { name: 'O2000', exact: true }).click();
  };
  const upload = async (name: string, text: string, number: number) => {
    await page.locator('input[type="file"]').setInputFiles({ name, mimeType: 'text/plain', buffer: Buffer.from(text) });
    await poll(status).toMatch(new RegExp(`Version ${number} uploaded`));
    await page.locator(`tr[data-version="${number}"]`).getByRole('button', { name: 'Submit' }).click();
    await poll(() => page.locator(`tr[data-version="${number}"]`).getAttribute('data-state')).toBe('submitted');
  };

  beforeAll(async () => {
    const demo = JSON.parse(readFileSync(new URL('../../config/default.json', import.meta.url), 'utf8')) as Record<string, unknown>;
    const config = parseConfig({
      ...demo, dataDir: mkdtempSync(join(tmpdir(), 'console-journey-')), timeZone: 'UTC', logLevel: 'silent',
      communication: { host: '127.0.0.1', port: 0 }, programs: { host: '127.0.0.1', port: 0 }, mtconnect: { host: '127.0.0.1', port: 0 },
    });
    roles = await startRoles(ROLES, ['gateway', 'programs'], { config, file: 'config/default.json', logger: pino({ level: 'silent' }), env: { ADMIN_PASSWORD } });
    const consoles = [...rolesBanner(roles.banners).matchAll(/^ {2}console: +(http:\/\/\S+)\/ /gm)].map((m) => m[1] as string);
    programsUrl = consoles[1] as string;
    // The second gateway of the plant, in this process, and a key made on it for the program service.
    second = await startTestGateway({ machines: [simMachine('R1', { name: 'Hall 2 mill' }), simMachine('R2', { name: 'Hall 2 lathe' })] });
    secondUrl = await second.gateway.listen({ host: '127.0.0.1', port: 0 });
    secondKey = ((await second.request('POST', '/api/security/secret-key/create', { username: 'admin', label: 'program service' })).body.data as { key: string }).key;
    browser = await launchChromium();
    page = await openPage(browser, { width: 1280, height: 900 });
    page.on('response', (r) => {
      if (r.status() === 404) notFound.push(r.url());
      if (r.status() === 403) refused.push(r.url());
    });
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    for (const part of roles?.stopParts ?? []) await part.stop();
    await second?.stop();
  });

  it('PV-01 an administrator makes a second user, a library and a program, and uploads and submits two versions', async () => {
    await page.goto(`${programsUrl}/`);
    await logIn('admin', ADMIN_PASSWORD);
    await nav('Admin').click();
    await page.getByLabel('User name').fill('arne');
    await page.getByLabel('Password', { exact: true }).fill(ARNE_PASSWORD);
    await page.getByRole('form', { name: 'New user' }).getByLabel('Role').selectOption('approver');
    await page.getByRole('button', { name: 'Add user' }).click();
    await poll(() => page.locator('tr[data-user="arne"]').count()).toBe(1);
    await nav('Programs').click();
    await noSeriousViolations(page, 'programs, empty');
    await page.getByText('New library').click();
    await page.locator('#new-library-name').fill('Flanges');
    await page.getByLabel('Approvals before a version is published').selectOption('1');
    await page.getByRole('button', { name: 'Make the library' }).click();
    await poll(status).toMatch(/Library Flanges made/);
    await page.getByText('New program').click();
    await page.locator('#new-program-name').fill('O2000');
    await page.getByRole('button', { name: 'Make the program' }).click();
    await poll(status).toMatch(/Program O2000 made/);
    // The program has a URL of its own: a reload comes back to it.
    await poll(() => page.url()).toMatch(/#\/programs\/prg_/);
    await page.reload();
    await poll(() => page.getByRole('heading', { name: 'O2000: versions' }).count()).toBe(1);
    await upload('O2000.nc', V1, 1);
    await upload('O2000-v2.nc', V2, 2);
    await noSeriousViolations(page, 'programs');
    await logOut();
  });

  it('PV-01 the second user, an approver, sees what a version changes on the machine against the version in force, and approves both; no Admin tab, no refusal', async () => {
    refused.length = 0;
    await logIn('arne', ARNE_PASSWORD);
    expect(await nav('Admin').count()).toBe(0);
    await nav('Approvals').click();
    const v1 = page.locator('li.card', { hasText: 'O2000 version 1' });
    await poll(() => v1.textContent()).toMatch(/first version of this program to be published/);
    await v1.getByRole('button', { name: 'Approve' }).click();
    await poll(status).toMatch(/O2000 version 1: approved; the version is now published/);
    const v2 = page.locator('li.card', { hasText: 'O2000 version 2' });
    const summary = v2.getByRole('region', { name: 'What changes on the machine' });
    await poll(() => summary.textContent()).toMatch(/Tools addedT2.*Tools removedT1.*Feeds250 → 300.*Work offsets addedG55.*M-codes addedM8/);
    await page.screenshot({ path: join(SHOTS, 'approval.png'), fullPage: true });
    await noSeriousViolations(page, 'approval with the changes');
    // The whole diff, one click away, at a URL of its own.
    await v2.getByRole('link', { name: 'The whole diff, side by side' }).click();
    await poll(() => page.locator('table.side-by-side td.add').first().textContent()).toContain('G55');
    await poll(() => page.url()).toMatch(/#\/programs\/prg_\w+\/versions\/2\?diff=1$/);
    await nav('Approvals').click();
    await v2.getByLabel('Comment').fill('feed and coolant checked');
    await v2.getByRole('button', { name: 'Approve' }).click();
    await poll(status).toMatch(/O2000 version 2: approved/);
    for (const where of ['Overview', 'Programs', 'Trials', 'Deployments', 'Drift', 'Machines', 'Gateways']) {
      await nav(where).click();
      await poll(() => page.locator('main h1').count()).toBeGreaterThan(0);
    }
    expect(refused).toEqual([]);
    // Nothing is offered that an approver's role cannot do: no deploying, uploading or submitting.
    await openProgram();
    await poll(() => page.locator('tr[data-version]').count()).toBe(2);
    for (const name of ['Deploy…', 'Submit for approval', 'Publish']) expect(await page.getByRole('button', { name }).count(), name).toBe(0);
    expect(await page.locator('.drop').count()).toBe(0);
    await logOut();
  });

  it('PV-01 PV-34 the administrator deploys version 1 to two demo machines without setting a directory; an assignment is changed and removed', async () => {
    await logIn('admin', ADMIN_PASSWORD);
    await openProgram();
    await page.locator('tr[data-version="1"]').getByRole('button', { name: 'Deploy…' }).click();
    await poll(() => page.getByText('not assigned to any machine yet').count()).toBe(1);
    for (const machine of ['Lathe 1 (L01)', 'Lathe 2 (L02)', 'VMC 1 (M01)']) {
      await page.getByLabel('Assign to').selectOption({ label: machine });
      await page.getByRole('button', { name: 'Add the assignment' }).click();
      await poll(() => page.locator('[data-assignment]', { hasText: machine.replace(/ \(.*/, '') }).count()).toBe(1);
    }
    const vmc = page.locator('[data-assignment="VMC 1"]');
    await vmc.getByRole('button', { name: 'Change' }).click();
    await vmc.getByLabel('Directory', { exact: true }).fill('//CNC_MEM/USER/PATH2/');
    await vmc.getByRole('button', { name: 'Save the assignment' }).click();
    await poll(() => vmc.locator('[data-dir]').textContent()).toBe('//CNC_MEM/USER/PATH2/');
    await vmc.getByRole('button', { name: 'Remove' }).click();
    await poll(() => page.locator('[data-assignment]').count()).toBe(2);
    await page.locator('[data-assignment="Lathe 1"]').getByRole('button', { name: 'Preview' }).click();
    await poll(() => page.getByRole('region', { name: 'Preview of the transformed program' }).textContent()).toMatch(/Lathe 1 receives: O2000/);
    await noSeriousViolations(page, 'deploy panel');
    await page.getByRole('button', { name: 'Start deployment' }).click();
    await poll(() => page.locator('tr[data-deployment-status="Succeeded"]').count(), { timeout: 30_000 }).toBe(2);
    expect(await page.getByRole('table', { name: 'Deployments of this batch' }).textContent()).toMatch(/Lathe 1.*Lathe 2|Lathe 2.*Lathe 1/);
  });

  it('PV-01 a trial of version 2 is started from the deploy panel and pulled back from the deployments list; a version is obsoleted from its row', async () => {
    await openProgram();
    await page.locator('tr[data-version="2"]').getByRole('button', { name: 'Deploy…' }).click();
    await poll(() => page.locator('[data-assignment]').count()).toBe(2);
    await page.locator('[data-assignment="Lathe 1"]').getByRole('checkbox').uncheck();
    await page.getByLabel('Run it as a trial').check();
    await page.getByLabel('Hours watched').fill('4');
    await page.getByLabel('Cycles needed to judge').fill('2');
    await page.screenshot({ path: join(SHOTS, 'trial-start.png'), fullPage: true });
    await noSeriousViolations(page, 'trial options');
    await page.getByRole('button', { name: 'Start the trial' }).click();
    await poll(() => page.locator('tr[data-deployment-status="Succeeded"]').count(), { timeout: 30_000 }).toBe(1);
    await nav('Deployments').click();
    const trialRow = page.locator('tr[data-purpose="trial"]');
    await poll(() => trialRow.textContent(), { timeout: 15_000 }).toMatch(/Lathe 2.*O2000 v2/);
    await poll(async () => {
      await nav('Overview').click();
      await nav('Deployments').click();
      // The list is drawn with its names at once: a row naming the version is a loaded list.
      await trialRow.filter({ hasText: 'O2000 v2' }).waitFor();
      return trialRow.getByRole('button', { name: 'Pull back the trial' }).count();
    }, { timeout: 20_000 }).toBe(1);
    await page.screenshot({ path: join(SHOTS, 'deployments.png'), fullPage: true });
    await noSeriousViolations(page, 'deployments');
    await trialRow.getByRole('button', { name: 'Pull back the trial' }).click();
    await poll(status).toMatch(/pulling back to the previous release/);
    await poll(async () => {
      await nav('Overview').click();
      await nav('Deployments').click();
      return page.locator('tr[data-purpose="pull-back"]').textContent();
    }, { timeout: 30_000 }).toMatch(/Lathe 2.*O2000 v1.*Succeeded/);

    await openProgram();
    await page.locator('tr[data-version="2"]').getByRole('button', { name: 'Obsolete' }).click();
    await poll(() => page.locator('tr[data-version="2"]').getAttribute('data-state')).toBe('obsolete');
    expect(await page.locator('tr[data-version="2"]').getByRole('button', { name: 'Deploy…' }).count()).toBe(0);
  });

  it('PV-33 a second gateway is registered and synced from the gateways page; a machine\'s directory is set and a group made on the machines page', async () => {
    await nav('Gateways').click();
    await poll(() => page.locator('tr[data-gateway="local"]').getAttribute('data-reachable')).toBe('true');
    await page.getByLabel('Name', { exact: true }).fill('hall-2');
    await page.getByLabel('Address').fill(secondUrl);
    await page.getByLabel('Secret key').fill(secondKey);
    await page.getByRole('button', { name: 'Register the gateway' }).click();
    // Registered and synced at once: its machines can be assigned right away.
    await poll(status).toMatch(/Gateway hall-2 registered and synced: 2 machines added/);
    const row = page.locator('tr[data-gateway="hall-2"]');
    await row.getByRole('button', { name: 'Sync now' }).click();
    await poll(status).toMatch(/hall-2 synced: 0 machines added, 0 changed, 0 gone, 0 back, 2 unchanged/);
    expect(await row.getAttribute('data-reachable')).toBe('true');
    await page.screenshot({ path: join(SHOTS, 'gateways.png'), fullPage: true });
    await noSeriousViolations(page, 'gateways');
    await nav('Machines').click();
    await poll(() => page.locator('tr[data-machine]').count()).toBe(14);
    const r1 = page.locator('tr[data-machine="R1"]');
    expect(await r1.textContent()).toMatch(/Hall 2 mill.*hall-2.*none: set one before deploying/);
    await r1.getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('Program directory').fill('//CNC_MEM/USER/PATH1/');
    await page.getByRole('button', { name: 'Save Hall 2 mill' }).click();
    await poll(() => r1.locator('code').textContent()).toBe('//CNC_MEM/USER/PATH1/');
    // A group of this service, made on the same page.
    const newGroup = page.getByRole('form', { name: 'New group' });
    await newGroup.getByLabel('Group name').fill('Night shift');
    await newGroup.getByLabel('Lathe 1', { exact: true }).check();
    await newGroup.getByLabel('Lathe 2', { exact: true }).check();
    await newGroup.getByRole('button', { name: 'Make the group' }).click();
    await poll(status).toMatch(/Group Night shift made/);
    await poll(() => page.locator('tr[data-group="Night shift"]').textContent()).toMatch(/this service.*Lathe 1, Lathe 2/);
    await poll(() => page.locator('tr[data-machine="L01"]').textContent()).toMatch(/Night shift/);
    await page.screenshot({ path: join(SHOTS, 'machines.png'), fullPage: true });
    await noSeriousViolations(page, 'machines');
  });

  it('PV-39 the audit names programs, versions, machines and users instead of their ids (the ids on hover)', async () => {
    await nav('Audit').click();
    const table = page.getByRole('table', { name: 'Audit records' });
    await poll(() => table.textContent()).toMatch(/O2000 v1/);
    const text = (await table.textContent()) as string;
    expect(text).toMatch(/Lathe 1/);
    expect(text).toMatch(/user arne/);
    expect(text).not.toMatch(/\b(ver|mch|usr|prg)_/);
    await noSeriousViolations(page, 'audit with names');
  });

  it('PV-01 PV-37 the terminal on a 390 px phone shows that Lathe 1 runs the deployed program: matches', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${programsUrl}/terminal`);
    await page.getByLabel('Machine').selectOption({ label: 'Lathe 1 (L01)' });
    await page.getByLabel('Your name').fill('Olga Operator');
    await page.getByRole('button', { name: 'Request check-in' }).click();
    await poll(() => page.locator('[data-matches]').getAttribute('data-matches'), { timeout: 30_000 }).toBe('true');
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(SHOTS, 'terminal-phone.png'), fullPage: true });
    await noSeriousViolations(page, 'terminal on a phone');
    expect(notFound).toEqual([]);
  });
});
