/**
 * The fleet console's system page in a real browser (Debian's Chromium):
 * its Northbound section shows each target's state, cursor, backlog and
 * last error as gateway-info gives them, and moves without a reload when a
 * target's broker goes away; axe-core finds no serious or critical
 * accessibility violation. A screenshot goes to docs/console/.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessBroker } from '../../core/mqtt/broker.js';
import { simMachine, startTestGateway, TEST_ADMIN_PASSWORD, type TestGateway } from '../fixtures/gateway.js';
import { launchChromium, noSeriousViolations, openPage } from './browser.js';

const SHOTS = resolve(import.meta.dirname, '../../docs/console');

describe('the system page\'s Northbound section in Chromium', { timeout: 120_000 }, () => {
  let broker: InProcessBroker;
  let gw: TestGateway;
  let url: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    broker = new InProcessBroker({ users: { 'gw-north': 'uns-password-1' } });
    await broker.start();
    const fast = { tasks: { CNCStatus: { enabled: true, intervalMs: 250 } } };
    gw = await startTestGateway({
      gateway: { name: 'Plant North' },
      communication: { rateLimits: {} },
      machines: [simMachine('L1', { name: 'Lathe 1', ...fast }), simMachine('L2', { name: 'Lathe 2', ...fast })],
      northbound: {
        enterprise: 'acme', site: 'lyon', area: 'machining',
        targets: [
          { name: 'plant-uns', description: 'The plant\'s Unified Namespace', brokerUrl: broker.url, username: 'gw-north', password: 'uns-password-1', protocolVersion: 4, topicRoot: 'acme/lyon/machining/north', reconnectMaxSeconds: 2 },
          { name: 'ignition', brokerUrl: broker.url, username: 'gw-north', password: 'not-the-password', format: 'sparkplug', topicRoot: 'Lyon', protocolVersion: 4, reconnectMaxSeconds: 2 },
          { name: 'historian', brokerUrl: broker.url, enabled: false },
        ],
      },
    });
    url = await gw.gateway.listen({ host: '127.0.0.1', port: 0 });
    browser = await launchChromium();
    page = await openPage(browser, { width: 1280, height: 800 });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await broker?.stop();
  });

  const row = (name: string) => page.locator(`tr[data-target="${name}"]`);

  it('shows each target with its state, cursor, backlog and last error, never a password', async () => {
    await page.goto(`${url}/#/system`);
    await page.getByLabel('User name').fill('admin');
    await page.getByLabel('Password', { exact: true }).fill(TEST_ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Northbound' }).isVisible(), { timeout: 10_000 }).toBe(true);
    await expect.poll(() => row('plant-uns').locator('[data-state]').getAttribute('data-state'), { timeout: 10_000 }).toBe('connected');
    await expect.poll(async () => Number((await row('plant-uns').locator('td.cursor').textContent())?.split(' ')[0]), { timeout: 15_000 }).toBeGreaterThan(0);
    expect(await row('plant-uns').textContent()).toContain('The plant\'s Unified Namespace');
    expect(await row('plant-uns').textContent()).toContain('UNS JSON (acme/lyon/machining/north)');
    await expect.poll(() => row('ignition').locator('[data-state]').getAttribute('data-state'), { timeout: 10_000 }).toMatch(/retrying|connecting/);
    await expect.poll(() => row('ignition').locator('td.last-error').textContent(), { timeout: 10_000 }).toMatch(/Not authorized|Bad username or password/i);
    expect(await row('ignition').textContent()).toContain('Sparkplug B (Lyon/Plant North)');
    expect(await row('historian').locator('[data-state]').getAttribute('data-state')).toBe('disabled');
    expect(await page.content()).not.toContain('uns-password-1');
    await page.screenshot({ path: join(SHOTS, 'northbound.png'), fullPage: true });
    await noSeriousViolations(page, 'system page');
  });

  it('a target whose broker goes away turns to Retrying with its error and a growing backlog, without a reload', async () => {
    await broker.stop();
    await expect.poll(() => row('plant-uns').locator('[data-state]').getAttribute('data-state'), { timeout: 20_000 }).toMatch(/retrying|connecting/);
    await expect.poll(() => row('plant-uns').locator('td.backlog').textContent(), { timeout: 20_000 }).toMatch(/^\d+ rows, \d+/);
    await expect.poll(() => row('plant-uns').locator('td.last-error').textContent(), { timeout: 20_000 }).toMatch(/closed|ECONNREFUSED/);
    await broker.start();
    await expect.poll(() => row('plant-uns').locator('[data-state]').getAttribute('data-state'), { timeout: 30_000 }).toBe('connected');
    await expect.poll(() => row('plant-uns').locator('td.backlog').textContent(), { timeout: 30_000 }).toBe('none');
  });
});
