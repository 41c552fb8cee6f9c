/**
 * The consoles as served (their browser tests are in test/peers): the
 * program service's page at `/` with its own bundle; the build made once per
 * source hash, into a directory named after it, with a manifest and gzip
 * copies; a role without a console still leads `/` to its API reference.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, sourceHash } from '../../../plugins/console/build.js';
import { programsConsolePlugin } from '../../../plugins/console/programs.js';
import { TEST_ACCOUNTS } from '../../fixtures/programs-accounts.js';
import { startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';

describe('web consoles', () => {
  let svc: TestProgramService;
  beforeAll(async () => {
    svc = await startTestProgramService({ plugins: [TEST_ACCOUNTS, programsConsolePlugin] });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('PV-01 the program service serves its console at / (its own bundle, a strict CSP); the page needs no session, the API does', async () => {
    const page = await fetch(`${svc.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await page.text();
    const script = /src="\/assets\/(programs-[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeTruthy();
    const js = await fetch(`${svc.url}/assets/${script}`);
    expect(js.status).toBe(200);
    // The bundle calls the public operations only.
    expect(await js.text()).toContain('/api/v1');
    expect((await fetch(`${svc.url}/api/v1/auth/me`)).status).toBe(401);
  });

  it('the build is keyed by a hash of its sources, made once, with a manifest and gzip copies that match', async () => {
    const first = await ensureBuilt();
    const again = await ensureBuilt();
    expect(again.dir).toBe(first.dir);
    expect(first.dir.endsWith(sourceHash())).toBe(true);
    expect(Object.keys(first.manifest.consoles).sort()).toEqual(['gateway', 'programs', 'terminal']);
    expect(Object.keys(first.manifest.consoles.gateway?.workers ?? {})).toEqual(['fleet']);
    for (const asset of Object.values(first.manifest.assets)) {
      const body = readFileSync(join(first.dir, asset.file));
      expect(body.length).toBe(asset.bytes);
      expect(gunzipSync(readFileSync(join(first.dir, `${asset.file}.gz`))).equals(body)).toBe(true);
    }
    expect(existsSync(join(first.dir, 'manifest.json'))).toBe(true);
  });
});
