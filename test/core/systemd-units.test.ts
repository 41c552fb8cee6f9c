/**
 * The systemd units of docs/operations.md, line by line: what restarts, what
 * is writable, where the secrets come from and what the backup runs. The
 * peer suite also runs `systemd-analyze verify` on them
 * (test/peers/systemd-verify.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../core/runtime/package-root.js';
import { SECRET_VARIABLES } from '../../core/config/secret-files.js';
import { directives, documentedUnits } from '../fixtures/systemd-units.js';

const units = documentedUnits();
const unit = (name: string) => {
  const found = units.find((u) => u.name === name);
  if (!found) throw new Error(`docs/operations.md has no unit ${name}`);
  return found.text;
};

describe('the documented systemd units', () => {
  it('are the service, the backup service and its timer', () => {
    expect(units.map((u) => u.name).sort()).toEqual(['cnc-backup.service', 'cnc-backup.timer', 'cnc-gateway.service']);
  });

  it('no RestartPreventExitStatus= turns a failure into a permanent stop; every failure restarts, a loop is bounded by the start limit', () => {
    const service = unit('cnc-gateway.service');
    for (const u of units) expect(directives(u.text, 'RestartPreventExitStatus')).toEqual([]);
    expect(directives(service, 'Restart')).toEqual(['on-failure']);
    expect(directives(service, 'StartLimitBurst')).toHaveLength(1);
  });

  it('ReadWritePaths= names only paths that may be absent with "-"; the data directory is the StateDirectory', () => {
    const service = unit('cnc-gateway.service');
    expect(directives(service, 'StateDirectory')).toEqual(['cnc']);
    expect(directives(service, 'Environment')).toContain('GATEWAY_DATA_DIR=/var/lib/cnc');
    const paths = directives(service, 'ReadWritePaths').flatMap((v) => v.split(/\s+/)).filter(Boolean);
    for (const path of paths) expect(path.startsWith('-') || path.startsWith('/var/lib/cnc'), path).toBe(true);
  });

  it('the administrator password and every other secret come from credentials files (LoadCredential=, <NAME>_FILE), never from the environment', () => {
    const service = unit('cnc-gateway.service');
    const credentials = new Set(directives(service, 'LoadCredential').map((v) => v.split(':')[0]));
    const files = directives(service, 'Environment').filter((v) => /^[A-Z_]+_FILE=%d\//.test(v));
    expect(files).toContain('ADMIN_PASSWORD_FILE=%d/admin-password');
    for (const file of files) expect(credentials.has(file.replace(/^[A-Z_]+_FILE=%d\//, ''))).toBe(true);
    // In every ini block of the document (the cloud's lines too): no secret set directly, none read by a shell.
    const markdown = readFileSync(join(PACKAGE_ROOT, 'docs/operations.md'), 'utf8');
    const ini = [...markdown.matchAll(/```ini\n([\s\S]*?)```/g)].map((m) => m[1]!).join('\n');
    for (const name of SECRET_VARIABLES) expect(ini).not.toMatch(new RegExp(`(^|[\\s"'=])${name}=`, 'm'));
    expect(ini).not.toContain('$(cat');
    expect(ini).toMatch(/CLOUD_DATABASE_URL_FILE=%d\/cloud-db-url/);
  });

  it('the service and the backup run from the built installation (node dist/core/main.js), without the sources, tsx or npm', () => {
    const start = directives(unit('cnc-gateway.service'), 'ExecStart');
    expect(start).toHaveLength(1);
    expect(start[0]).toMatch(/^\/usr\/bin\/node .*dist\/core\/main\.js /);
    const backup = directives(unit('cnc-backup.service'), 'ExecStart');
    expect(backup).toHaveLength(1);
    expect(backup[0]).toMatch(/\/usr\/bin\/node dist\/core\/main\.js backup --out .+ --data-dir \/var\/lib\/cnc/);
    expect(backup[0]).not.toMatch(/npm|tsx|core\/main\.ts/);
  });
});
