/**
 * Debian's Chromium driven by playwright-core, for the console tests: the
 * browser cannot be downloaded here, so the Debian package (`apt-get install
 * chromium`) is used; a missing one fails with the install hint.
 */
import AxeBuilder from '@axe-core/playwright';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/lib/chromium/chromium'];

export function chromiumPath(): string {
  const found = CANDIDATES.find((p) => existsSync(p));
  if (!found) throw new Error('chromium not found; install the Debian package `chromium` (apt-get install chromium) to run the console tests');
  return found;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/** axe-core over the page (WCAG 2.1 A and AA): no serious or critical violation. */
export async function noSeriousViolations(page: Page, what: string): Promise<void> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  const serious = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.length} nodes, e.g. ${v.nodes[0]?.target.join(' ')})`), what).toEqual([]);
}

/** A page in a fresh context (its own cookies and storage), waiting at most 10 s for an element. */
export async function openPage(browser: Browser, viewport: { width: number; height: number }): Promise<Page> {
  const page = await (await browser.newContext({ viewport })).newPage();
  page.setDefaultTimeout(10_000);
  return page;
}
