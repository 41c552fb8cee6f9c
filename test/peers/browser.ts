/**
 * Debian's Chromium driven by playwright-core, for the console tests: the
 * browser cannot be downloaded here, so the Debian package (`apt-get install
 * chromium`) is used; a missing one fails with the install hint.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

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
