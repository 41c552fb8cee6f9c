/**
 * Sign-in through the plant's OpenID Connect provider in a real browser
 * (Debian's Chromium through playwright-core): a real provider
 * (oidc-provider) on 127.0.0.1, the gateway's fleet console and the program
 * service's console against it. Each console's "Sign in with …" through the
 * provider's own forms (and the terminal's), the role mapping, an unmapped user's page, an
 * approval that asks for a fresh sign-in, a logout that ends the session in
 * the other console too (back-channel logout), and the local form when the
 * provider is down.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROGRAMS_PLUGINS } from '../../core/roles/programs/compose.js';
import { parseConfig } from '../../core/roles/index.js';
import { createAccountsPlugin } from '../../plugins/accounts/index.js';
import { freePort } from '../fixtures/free-port.js';
import { simMachine, startTestGateway, TEST_ADMIN_PASSWORD, type TestGateway } from '../fixtures/gateway.js';
import { consoleClient } from '../fixtures/oidc-consoles.js';
import { startTestIssuer, type TestIssuer } from '../fixtures/oidc-issuer.js';
import { startTestProgramService, TEST_PASSWORD_COST, type TestProgramService } from '../fixtures/programs.js';
import { login, TEST_PROGRAMS_ADMIN_PASSWORD, userSession } from '../fixtures/programs-accounts.js';
import { launchChromium, noSeriousViolations, openPage } from './browser.js';

const PROGRAM = Buffer.from('%\nO5001 (SSO)\nG21 G90 G54\nM30\n%\n', 'latin1').toString('base64');

describe('sign-in through the provider in Chromium', { timeout: 120_000 }, () => {
  let op: TestIssuer;
  let gw: TestGateway;
  let svc: TestProgramService;
  let gUrl: string;
  let pUrl: string;
  let browser: Browser;
  let page: Page;

  /** On the provider's pages: its login form (any password), then its consent form, as a person fills them. */
  const atProvider = async (p: Page, accountId: string) => {
    await p.waitForURL((u) => u.href.startsWith(op.issuer));
    if (await p.locator('input[name="login"]').count()) {
      await p.locator('input[name="login"]').fill(accountId);
      await p.locator('input[name="password"]').fill('any');
      await p.locator('button[type="submit"]').click();
    }
    await p.waitForURL((u) => !u.href.startsWith(op.issuer) || u.pathname.startsWith('/interaction/'));
    if (new URL(p.url()).pathname.startsWith('/interaction/') && p.url().startsWith(op.issuer)) await p.locator('button[type="submit"]').click();
  };

  beforeAll(async () => {
    const [gPort, pPort] = [await freePort(), await freePort()];
    gUrl = `http://127.0.0.1:${gPort}`;
    pUrl = `http://127.0.0.1:${pPort}`;
    op = await startTestIssuer({
      accounts: [
        { id: 'pat-sub', name: 'Pat', groups: ['qa-approvers', 'cnc-admins'], claims: { preferred_username: 'pat' } },
        { id: 'vic-sub', groups: ['visitors'], claims: { preferred_username: 'vic' } },
      ],
      clients: [consoleClient('gateway-console', gUrl), consoleClient('programs-console', pUrl)],
    });
    gw = await startTestGateway({
      machines: [simMachine('M1', { name: 'Mill 1' })], communication: { rateLimits: {} },
      security: { oidc: { issuer: op.issuer, clientId: 'gateway-console', clientSecret: 'gateway-console-secret-of-thirty-two-characters', displayName: 'Plant SSO', roles: { 'cnc-admins': 'admin' } } },
    });
    await gw.gateway.listen({ host: '127.0.0.1', port: gPort });
    const config = parseConfig({
      roles: ['programs'],
      programs: { oidc: { issuer: op.issuer, clientId: 'programs-console', clientSecret: 'programs-console-secret-of-thirty-two-characters', displayName: 'Plant SSO', roles: { 'qa-approvers': 'approver' }, maxAuthAgeForApprovalSec: 5 } },
    });
    const plugins = PROGRAMS_PLUGINS.map((p) => (p.name === 'accounts' ? createAccountsPlugin({ passwordCost: TEST_PASSWORD_COST }) : p));
    svc = await startTestProgramService({ plugins, env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, config, port: pPort });
    browser = await launchChromium();
    page = await openPage(browser, { width: 1280, height: 860 });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
    await gw?.stop();
    await op?.close();
  });

  it('the fleet console signs a mapped administrator in through the provider', async () => {
    await page.goto(`${gUrl}/`);
    const button = page.getByRole('link', { name: 'Sign in with Plant SSO' });
    await expect.poll(() => button.isVisible()).toBe(true);
    await noSeriousViolations(page, 'gateway login with the provider');
    await button.click();
    await atProvider(page, 'pat-sub');
    await page.waitForURL(`${gUrl}/`);
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    await expect.poll(() => page.locator('li.tile').count(), { timeout: 10_000 }).toBe(1);
  });

  it('the program console signs a mapped approver in through the provider, with the mapped role', async () => {
    const programs = await page.context().newPage();
    await programs.goto(`${pUrl}/`);
    await programs.getByRole('link', { name: 'Sign in with Plant SSO' }).click();
    await atProvider(programs, 'pat-sub');
    await programs.waitForURL(`${pUrl}/`);
    await expect.poll(() => programs.locator('.who').textContent()).toBe('pat (approver)');
    await expect.poll(() => programs.locator('nav.top').getByRole('link', { name: 'Approvals' }).isVisible()).toBe(true);
    await programs.close();
  });

  it('the terminal signs in through the provider too, and comes back to the terminal', async () => {
    const other = await openPage(browser, { width: 1000, height: 800 });
    await other.goto(`${pUrl}/terminal`);
    await other.getByRole('link', { name: 'Sign in with Plant SSO' }).click();
    await atProvider(other, 'pat-sub');
    await other.waitForURL(`${pUrl}/terminal`);
    await expect.poll(() => other.getByRole('dialog').count()).toBe(0);
    await other.context().close();
  });

  it('an unmapped user gets a page naming the claim values seen and that an administrator must map one', async () => {
    const other = await openPage(browser, { width: 1000, height: 800 });
    await other.goto(`${pUrl}/`);
    await other.getByRole('link', { name: 'Sign in with Plant SSO' }).click();
    await atProvider(other, 'vic-sub');
    await expect.poll(() => other.getByRole('heading', { name: 'No access yet' }).isVisible()).toBe(true);
    const text = await other.locator('main').textContent();
    expect(text).toContain('visitors');
    expect(text).toMatch(/administrator must map one of them/);
    expect(text).toContain('programs.oidc.roles');
    await other.context().close();
  });

  it('an approval by a person signed in longer ago than maxAuthAgeForApprovalSec asks for a fresh sign-in at the provider, then goes through', async () => {
    const admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    const paula = await userSession(svc, admin, 'paula', 'programmer');
    const post = async (by: typeof admin, path: string, body: unknown) => (await svc.request('POST', path, { cookie: by.cookie, headers: by.headers, body })).body;
    const lib = await post(admin, '/api/v1/libraries', { name: 'Shafts', approvalPolicy: { mode: 'approvals', required: 1 } });
    const program = await post(admin, '/api/v1/programs', { libraryId: lib.id, name: 'SHAFT', controller: 'fanuc' });
    const version = await post(paula, `/api/v1/programs/${program.id}/versions`, { contentBase64: PROGRAM, notes: '' });
    await post(paula, `/api/v1/versions/${version.id}/submit`, {});
    const programs = await page.context().newPage();
    await programs.goto(`${pUrl}/#/approvals`);
    // Older than 5 s: the provider is asked again with max_age, and shows its login form.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    const card = programs.locator('li.card', { hasText: 'SHAFT version 1' });
    await card.getByRole('button', { name: 'Approve' }).click();
    await programs.waitForURL((u) => u.href.startsWith(op.issuer));
    expect(await programs.locator('input[name="login"]').count()).toBe(1);
    await atProvider(programs, 'pat-sub');
    await programs.waitForURL(`${pUrl}/#/approvals`);
    await programs.locator('li.card', { hasText: 'SHAFT version 1' }).getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => programs.getByRole('status').textContent()).toMatch(/SHAFT version 1: approved/);
    await programs.close();
  });

  it('logout in the program console ends its session and, through the provider, the fleet console\'s (back-channel logout)', async () => {
    const programs = await page.context().newPage();
    await programs.goto(`${pUrl}/`);
    await expect.poll(() => programs.locator('.who').textContent()).toBe('pat (approver)');
    // The fleet console is signed in until then.
    await page.reload();
    await expect.poll(() => page.locator('li.tile').count(), { timeout: 10_000 }).toBe(1);
    expect(await page.getByRole('dialog').count()).toBe(0);
    await programs.getByRole('button', { name: 'Log out' }).click();
    // The provider's "sign out?" page, confirmed; it then tells both consoles and comes back.
    await programs.waitForURL((u) => u.href.startsWith(op.issuer));
    await programs.locator('button[name="logout"], button[value="yes"]').first().click();
    await programs.waitForURL(`${pUrl}/`);
    await expect.poll(() => programs.getByRole('dialog').isVisible()).toBe(true);
    expect(op.backchannelDeliveries).toEqual(expect.arrayContaining([
      { uri: `${gUrl}/auth/oidc/backchannel-logout`, status: 200 }, { uri: `${pUrl}/auth/oidc/backchannel-logout`, status: 200 },
    ]));
    // The fleet console's JWT no longer works: its next call (its live updates, or a reload) brings the login back.
    await page.reload();
    await expect.poll(() => page.getByRole('dialog').isVisible(), { timeout: 10_000 }).toBe(true);
    await programs.close();
  });

  it('logout in the fleet console ends its session and goes on to the provider, which brings the browser back to the login', async () => {
    const fleet = await openPage(browser, { width: 1000, height: 800 });
    await fleet.goto(`${gUrl}/`);
    await fleet.getByRole('link', { name: 'Sign in with Plant SSO' }).click();
    await atProvider(fleet, 'pat-sub');
    await expect.poll(() => fleet.locator('li.tile').count(), { timeout: 10_000 }).toBe(1);
    const jwt = await fleet.evaluate<string | null>('sessionStorage.getItem("gateway-console-token")');
    await fleet.getByRole('button', { name: 'Log out' }).click();
    await fleet.waitForURL((u) => u.href.startsWith(op.issuer));
    await fleet.locator('button[name="logout"], button[value="yes"]').first().click();
    await fleet.waitForURL(`${gUrl}/`);
    await expect.poll(() => fleet.getByRole('dialog').isVisible()).toBe(true);
    // The JWT it held is refused from now on.
    expect((await fetch(`${gUrl}/api/security/users`, { headers: { authorization: `Bearer ${jwt}` } })).status).toBe(401);
    await fleet.context().close();
  });

  it('with the provider down the login says it cannot be reached, and the local form still works', async () => {
    op.pause();
    try {
      const other = await openPage(browser, { width: 1000, height: 800 });
      // The provider's state is asked again at most every 10 s.
      await expect.poll(async () => {
        await other.goto(`${gUrl}/`);
        return other.getByRole('status').filter({ hasText: 'Plant SSO cannot be reached' }).count();
      }, { timeout: 20_000, interval: 2_000 }).toBe(1);
      await other.getByLabel('User name').fill('admin');
      await other.getByLabel('Password', { exact: true }).fill(TEST_ADMIN_PASSWORD);
      await other.getByRole('button', { name: 'Log in' }).click();
      await expect.poll(() => other.getByRole('dialog').count()).toBe(0);
      await other.context().close();
    } finally {
      op.resume();
    }
  });
});
