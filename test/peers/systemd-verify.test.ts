/**
 * `systemd-analyze verify` (Debian's systemd; `.ci/run` installs it) on the
 * units docs/operations.md gives: every key known, every value parsed, every
 * command executable. It prints what it ignores but exits 0, so any output
 * is a failure too.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { documentedUnits } from '../fixtures/systemd-units.js';

const dir = mkdtempSync(join(tmpdir(), 'systemd-units-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the documented systemd units', () => {
  it('pass systemd-analyze verify without a warning', () => {
    const units = documentedUnits();
    expect(units.length).toBeGreaterThanOrEqual(3);
    for (const u of units) writeFileSync(join(dir, u.name), u.text);
    const r = spawnSync('systemd-analyze', ['verify', '--man=no', ...units.map((u) => `./${u.name}`)], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    expect(r.error).toBeUndefined();
    expect(`${r.stdout}${r.stderr}`).toBe('');
    expect(r.status).toBe(0);
  });
});
