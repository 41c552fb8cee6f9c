/**
 * Web console benchmark, in Debian's Chromium (playwright-core) against a
 * gateway with 1,000 simulated machines sampled every second:
 *  - first load on localhost: from navigation to every machine's tile drawn
 *    (already logged in), with the page's own navigation timings;
 *  - JavaScript and CSS the page loads, gzipped as served;
 *  - while the 1,000 machines update at 1 Hz for --seconds: the longest
 *    main-thread task (the Long Tasks API reports every task over 50 ms, so
 *    0 means none reached 50 ms).
 *
 *   npm run bench -- console [--machines 1000] [--seconds 20]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { parseConfig } from '../../core/roles/index.js';
import { Gateway } from '../../core/roles/gateway/gateway.js';
import { DRIVERS } from '../../drivers/registry.js';
import { GATEWAY_PLUGINS } from '../../core/roles/gateway/compose.js';
import { ensureBuilt } from '../../plugins/console/build.js';
import { launchChromium } from '../peers/browser.js';
import { benchMachines } from './bench-fleet.js';
import { option, printTable } from './stats.js';

export async function run(args: string[]): Promise<void> {
  const count = option(args, 'machines', 1000);
  const seconds = option(args, 'seconds', 20);
  const { manifest } = await ensureBuilt();
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-console-'));
  const password = 'bench-admin-password';
  const gateway = await Gateway.create({
    config: parseConfig({ gateway: { dataDir, timeZone: 'UTC' }, logLevel: 'warn', mtconnect: { host: '127.0.0.1', port: 0 }, machines: benchMachines(count) }),
    drivers: DRIVERS, plugins: GATEWAY_PLUGINS, logger: pino({ level: 'warn' }), env: { GATEWAY_ADMIN_PASSWORD: password },
  });
  const url = await gateway.listen({ host: '127.0.0.1', port: 0 });
  const token = ((await (await fetch(`${url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password }) })).json()) as { data: { token: string } }).data.token;
  const browser = await launchChromium();
  try {
    process.stdout.write(`console: ${count} machines; warming up\n`);
    await new Promise((r) => setTimeout(r, 3000));
    const loads: number[] = [];
    let last: { domContentLoaded: number; load: number; transferred: Record<string, number> } | undefined;
    // Three cold loads, each in a fresh context (empty cache), already logged in.
    for (let i = 0; i < 3; i++) {
      const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
      await context.addInitScript(`sessionStorage.setItem('gateway-console-token', ${JSON.stringify(token)})`);
      const page = await context.newPage();
      const started = Date.now();
      await page.goto(`${url}/`);
      await page.locator('li.tile').nth(count - 1).waitFor({ timeout: 30_000 });
      loads.push(Date.now() - started);
      // Browser-side scripts are strings: they run in the page, not in Node.
      last = await page.evaluate<{ domContentLoaded: number; load: number; transferred: Record<string, number> }>(`(() => {
        const nav = performance.getEntriesByType('navigation')[0];
        const transferred = {};
        for (const r of performance.getEntriesByType('resource')) {
          const kind = r.name.endsWith('.js') ? 'js' : r.name.endsWith('.css') ? 'css' : 'api';
          transferred[kind] = (transferred[kind] ?? 0) + r.encodedBodySize;
        }
        return { domContentLoaded: nav.domContentLoadedEventEnd, load: nav.loadEventEnd, transferred };
      })()`);
      if (i < 2) await context.close();
      else {
        // The last one stays open for the update measurement.
        await page.evaluate(`(() => {
          window.__longest = 0;
          window.__longTasks = 0;
          new PerformanceObserver((list) => {
            for (const e of list.getEntries()) {
              window.__longTasks++;
              window.__longest = Math.max(window.__longest, e.duration);
            }
          }).observe({ type: 'longtask', buffered: false });
        })()`);
        const statesNow = `[...document.querySelectorAll('li.tile')].map((e) => e.getAttribute('data-state')).join()`;
        const states0 = await page.evaluate<string>(statesNow);
        process.stdout.write(`  measuring ${seconds} s of updates\n`);
        await new Promise((r) => setTimeout(r, seconds * 1000));
        const states1 = await page.evaluate<string>(statesNow);
        const changed = states0.split(',').filter((s, k) => s !== states1.split(',')[k]).length;
        const m = await page.evaluate<{ longest: number; longTasks: number }>(`({ longest: window.__longest, longTasks: window.__longTasks })`);
        // The fleet console's own files (the build holds the program console's and the terminal's too).
        const own = manifest.consoles.gateway;
        const js = Object.values(manifest.assets).filter((a) => a.file === own?.script);
        const css = Object.values(manifest.assets).filter((a) => a.file === own?.style);
        const sum = (xs: { gzipBytes: number }[]) => xs.reduce((a, b) => a + b.gzipBytes, 0);
        const result = {
          machines: count, firstLoadMs: loads, domContentLoadedMs: last?.domContentLoaded, loadEventMs: last?.load,
          jsGzipBytes: sum(js), cssGzipBytes: sum(css), transferred: last?.transferred,
          updateSeconds: seconds, tilesWhoseStateChanged: changed, longTasksOver50ms: m.longTasks, longestTaskMs: m.longest,
        };
        printTable(`Web console benchmark (${count} machines, Chromium, Node ${process.version})`, [
          ['first load to every tile drawn, ms (3 cold loads)', loads.join(', '), '<= 1000'],
          ['  DOMContentLoaded / load event, ms (last load)', `${Math.round(result.domContentLoadedMs ?? 0)} / ${Math.round(result.loadEventMs ?? 0)}`, ''],
          ['JavaScript, gzipped, KB', (result.jsGzipBytes / 1024).toFixed(1), '<= 300'],
          ['CSS, gzipped, KB', (result.cssGzipBytes / 1024).toFixed(1), ''],
          [`tiles whose state changed in ${seconds} s`, String(changed), ''],
          ['long tasks (> 50 ms) while updating', String(m.longTasks), ''],
          ['longest task, ms (0: none over 50 ms)', m.longest.toFixed(0), '<= 50'],
        ]);
        process.stdout.write(`${JSON.stringify(result)}\n`);
        await context.close();
      }
    }
  } finally {
    await browser.close();
    await gateway.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
