/**
 * The gateway's fleet console in a real browser (Debian's Chromium through
 * playwright-core), against a real gateway: log in; the fleet's tiles and
 * counts; a machine goes to alarm and back; the group filter; the machine
 * page with its history charts; a session that expires brings the login back
 * without losing what was typed; keyboard use; axe-core finds no serious or
 * critical accessibility violation. Screenshots of each screen go to
 * docs/console/ (docs/console.md shows them).
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simMachine, startTestGateway, TEST_ADMIN_PASSWORD, type TestGateway } from '../fixtures/gateway.js';
import { DRIVERS_WITH_SCRIPTED, scriptedMachine, scriptedMachineConfig } from '../fixtures/scripted-machine.js';
import { launchChromium, noSeriousViolations, openPage } from './browser.js';

const SHOTS = resolve(import.meta.dirname, '../../docs/console');

describe('gateway fleet console in Chromium', { timeout: 120_000 }, () => {
  let gw: TestGateway;
  let url: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    const fast = { tasks: { CNCStatus: { enabled: true, intervalMs: 250 } } };
    gw = await startTestGateway({
      gateway: { name: 'Plant North' },
      // The default request limits, as a user runs the console: it must stay under them.
      communication: { rateLimits: {} },
      machines: [{ ...scriptedMachineConfig('S1'), name: 'Scripted mill', ...fast }, simMachine('L1', { name: 'Lathe 1', ...fast }), simMachine('L2', { name: 'Lathe 2', ...fast }), simMachine('G1', { name: 'Grinder', ...fast })],
      groups: [{ groupID: 'cell-a', name: 'Cell A', machineIDs: ['S1', 'L1'] }, { groupID: 'cell-b', name: 'Cell B', machineIDs: ['L2', 'G1'] }],
    }, undefined, { drivers: DRIVERS_WITH_SCRIPTED });
    url = await gw.gateway.listen({ host: '127.0.0.1', port: 0 });
    browser = await launchChromium();
    page = await openPage(browser, { width: 1280, height: 800 });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  const tile = (id: string) => page.locator(`li.tile[data-machine="${id}"]`);

  it('logs in with the gateway\'s login and shows every machine with its state, reason and the counts by state', async () => {
    await page.goto(`${url}/`);
    await expect.poll(() => page.getByRole('dialog').isVisible()).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'login.png') });
    await noSeriousViolations(page, 'login');
    // A wrong password is said in plain words.
    await page.getByLabel('User name').fill('admin');
    await page.getByLabel('Password', { exact: true }).fill('wrong-password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/password|credentials/i);
    await page.getByLabel('Password', { exact: true }).fill(TEST_ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.locator('li.tile').count(), { timeout: 10_000 }).toBe(4);
    await expect.poll(() => tile('L1').getAttribute('data-state'), { timeout: 10_000 }).toMatch(/running|idle|setup|alarm/);
    expect(await tile('L1').textContent()).toContain('Lathe 1');
    // The reason in plant words on the tile; the raw reason on its title and on the machine page.
    const reason = tile('L1').locator('.tile-reason');
    expect(await reason.textContent()).toMatch(/^(Running a program|Not running a program|Manual mode, not running|An alarm is active|Emergency stop pressed)$/);
    expect(await reason.getAttribute('title')).toMatch(/^(running|idle|setup|alarm): .*\(adjustedStatus=/);
    const all = await page.locator('button.count.all .count-n').textContent();
    expect(all).toBe('4');
    await page.screenshot({ path: join(SHOTS, 'fleet.png'), fullPage: true });
    await noSeriousViolations(page, 'fleet');
  });

  it('GW-15 a machine that raises an alarm turns to Alarm with its code and text on the tile and the machine page, and back when it clears, without a reload', async () => {
    const machine = scriptedMachine('S1');
    machine.clearAlarms();
    await expect.poll(() => tile('S1').getAttribute('data-state'), { timeout: 10_000 }).not.toBe('alarm');
    machine.raiseAlarm('EX1001', 'SPINDLE OVERHEAT', 'alarm');
    await expect.poll(() => tile('S1').getAttribute('data-state'), { timeout: 10_000 }).toBe('alarm');
    await expect.poll(() => tile('S1').locator('.tile-alarm').textContent(), { timeout: 10_000 }).toBe('1 alarm: EX1001 SPINDLE OVERHEAT');
    expect(await page.locator('button.count[data-count="alarm"] .count-n').textContent()).not.toBe('0');
    await page.screenshot({ path: join(SHOTS, 'fleet-alarm.png'), fullPage: true });
    // The machine page lists the alarm with its code.
    await tile('S1').locator('a').click();
    await expect.poll(() => page.locator('ul.alarms li').first().textContent(), { timeout: 10_000 }).toMatch(/^EX1001 SPINDLE OVERHEAT/);
    expect(await page.locator('ul.alarms li b').first().textContent()).toBe('EX1001');
    await page.getByRole('link', { name: '← Fleet' }).click();
    await expect.poll(() => page.locator('li.tile').count()).toBe(4);
    machine.clearAlarms();
    await expect.poll(() => tile('S1').getAttribute('data-state'), { timeout: 10_000 }).not.toBe('alarm');
  });

  it('a machine added through the API appears as a tile without a reload, and goes when it is deleted', async () => {
    expect((await gw.request('POST', '/api/config/machine/add', simMachine('N1', { name: 'New mill', tasks: { CNCStatus: { enabled: true, intervalMs: 250 } } }))).status).toBe(200);
    await expect.poll(() => tile('N1').count(), { timeout: 10_000 }).toBe(1);
    await expect.poll(() => tile('N1').getAttribute('data-state'), { timeout: 10_000 }).toMatch(/running|idle|setup|alarm/);
    expect(await tile('N1').textContent()).toContain('New mill');
    expect((await gw.request('POST', '/api/config/machine/delete', { machineID: 'N1' })).status).toBe(200);
    await expect.poll(() => tile('N1').count(), { timeout: 10_000 }).toBe(0);
    await expect.poll(() => page.locator('button.count.all .count-n').textContent()).toBe('4');
  });

  it('filters by group and by state, with the keyboard', async () => {
    await page.getByLabel('Group').selectOption('cell-b');
    await expect.poll(() => page.locator('li.tile').count()).toBe(2);
    expect(await page.locator('li.tile').evaluateAll((els) => els.map((e) => e.getAttribute('data-machine')).sort())).toEqual(['G1', 'L2']);
    await page.getByLabel('Group').selectOption('');
    // The counts are buttons: Tab to one and press Enter.
    const offline = page.locator('button.count[data-count="offline"]');
    await offline.focus();
    await page.keyboard.press('Enter');
    expect(await offline.getAttribute('aria-pressed')).toBe('true');
    await expect.poll(() => page.locator('li.tile').count()).toBe(0);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('li.tile').count()).toBe(4);
  });

  it('a session that expires brings the login back over the page, and what was typed stays', async () => {
    await page.getByLabel('Search').fill('Lathe');
    await expect.poll(() => page.locator('li.tile').count()).toBe(2);
    // Every JWT of the administrator stops being valid (as after 24 hours, or a password change elsewhere).
    const changed = await gw.request('POST', '/api/auth/change-password', { currentPassword: TEST_ADMIN_PASSWORD, newPassword: 'a-new-admin-password-2' });
    expect(changed.body.errorCode).toBe(0);
    await expect.poll(() => page.getByRole('dialog').isVisible(), { timeout: 10_000 }).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'session-expired.png') });
    await page.getByLabel('User name').fill('admin');
    await page.getByLabel('Password', { exact: true }).fill('a-new-admin-password-2');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    expect(await page.getByLabel('Search').inputValue()).toBe('Lathe');
    await expect.poll(() => page.locator('li.tile').count(), { timeout: 10_000 }).toBe(2);
    await page.getByLabel('Search').fill('');
  });

  it('the machine page shows live status, alarms, program and parts, and the history as charts for a chosen window', async () => {
    await tile('L1').locator('a').click();
    // Titled with the machine's name, its ID beside it.
    await expect.poll(() => page.locator('h1').textContent()).toBe('Lathe 1 L1');
    expect(await page.title()).toBe('Lathe 1 (L1)');
    await expect.poll(() => page.getByTestId('reason').textContent(), { timeout: 10_000 }).toMatch(/^(running|idle|setup|alarm|offline|noData)/);
    await expect.poll(() => page.locator('svg.timeline rect').count(), { timeout: 15_000 }).toBeGreaterThan(0);
    // A machine first seen minutes ago: Today is read from then, not from midnight (no hours of no data).
    await expect.poll(() => page.locator('[data-since-first-seen]').count(), { timeout: 15_000 }).toBe(1);
    expect(await page.getByRole('table', { name: 'Time per state' }).textContent()).not.toMatch(/No data\d+(\.\d)? h/);
    expect(await page.getByRole('table', { name: 'Time per state' }).isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Last 7 days' }).click();
    expect(await page.getByRole('button', { name: 'Last 7 days' }).getAttribute('aria-pressed')).toBe('true');
    await page.screenshot({ path: join(SHOTS, 'machine.png'), fullPage: true });
    await noSeriousViolations(page, 'machine page');
    await page.getByRole('link', { name: '← Fleet' }).click();
    await expect.poll(() => page.locator('li.tile').count()).toBe(4);
  });
});
