/**
 * The fleet console's system page in Chromium, against a real gateway: an
 * administrator makes a secret key for a user (shown once, then never
 * again: listed without its secret), the key works as that user, and
 * revoking it stops it at once; a user who is not an administrator is told
 * who makes keys and offered nothing they cannot use. axe-core on the page;
 * a screenshot goes to docs/console/.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simMachine, startTestGateway, TEST_ADMIN_PASSWORD, type TestGateway } from '../fixtures/gateway.js';
import { launchChromium, noSeriousViolations, openPage } from './browser.js';

const SHOTS = resolve(import.meta.dirname, '../../docs/console');
const OPERATOR_PASSWORD = 'operator-password-1';

describe('the fleet console\'s secret keys, in Chromium', { timeout: 120_000 }, () => {
  let gw: TestGateway;
  let url: string;
  let browser: Browser;
  let page: Page;

  const logIn = async (username: string, password: string) => {
    await expect.poll(() => page.getByRole('dialog').isVisible()).toBe(true);
    await page.getByLabel('User name').fill(username);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
  };
  const machinesWith = async (key: string) => (await gw.request('GET', '/api/config/machines', undefined, { token: key })).status;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    gw = await startTestGateway({ machines: [simMachine('M1', { name: 'Mill 1' })], communication: { rateLimits: {} } });
    const added = await gw.request('POST', '/api/security/user/add', { username: 'olga', password: OPERATOR_PASSWORD, authorizedApis: ['/api/config/machines'] });
    expect(added.body.errorCode).toBe(0);
    url = await gw.gateway.listen({ host: '127.0.0.1', port: 0 });
    browser = await launchChromium();
    page = await openPage(browser, { width: 1280, height: 800 });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  it('GW-73 an administrator makes a key for a user on the system page: shown once, listed without its secret, and it works as that user', async () => {
    await page.goto(`${url}/#/system`);
    await logIn('admin', TEST_ADMIN_PASSWORD);
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'System' }).click();
    const form = page.getByRole('form', { name: 'Make a secret key' });
    await form.getByLabel('For the user').selectOption('olga');
    await form.getByLabel('What it is for').fill('program service');
    await form.getByRole('button', { name: 'Make a key' }).click();
    const secret = page.locator('[data-secret]');
    await expect.poll(() => secret.textContent()).toMatch(/^gwk_/);
    const key = (await secret.textContent()) as string;
    await page.screenshot({ path: join(SHOTS, 'fleet-keys.png'), fullPage: true });
    await noSeriousViolations(page, 'system page with a new key');
    expect(await machinesWith(key)).toBe(200);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await secret.count()).toBe(0);
    const table = page.getByRole('table', { name: 'Secret keys' });
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1);
    expect(await table.textContent()).toMatch(/olga.*program service.*valid/);
    expect(await page.content()).not.toContain(key);
  });

  it('GW-73 revoking a key on the system page stops it at once', async () => {
    const key = ((await gw.request('POST', '/api/security/secret-key/create', { username: 'olga', label: 'old MES' })).body.data as { key: string }).key;
    expect(await machinesWith(key)).toBe(200);
    await page.reload();
    const row = page.getByRole('table', { name: 'Secret keys' }).locator('tr', { hasText: 'old MES' });
    await row.getByRole('button', { name: 'Revoke the key old MES of olga' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toMatch(/The key old MES of olga is revoked/);
    await expect.poll(() => row.getAttribute('data-revoked')).toBe('true');
    expect(await row.getByRole('button').count()).toBe(0);
    expect(await machinesWith(key)).toBe(401);
  });

  it('GW-73 a user who is not an administrator is told who makes keys, and offered no form', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await logIn('olga', OPERATOR_PASSWORD);
    await page.goto(`${url}/#/system`);
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Only an administrator of this gateway can see and make secret keys.');
    expect(await page.getByRole('form', { name: 'Make a secret key' }).count()).toBe(0);
    expect(await page.getByRole('table', { name: 'Secret keys' }).count()).toBe(0);
    await noSeriousViolations(page, 'system page for a user who is not an administrator');
  });
});
