import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, configFileFromArgs, configNotices, DEFAULT_CONFIG_FILE } from '../../core/config/config.js';
import { loadConfig, parseConfig } from '../../core/roles/index.js';
import { gatewaySettings } from '../../core/roles/gateway/config.js';
import { readPart } from '../../core/config/config-parts.js';
import { WEBHOOKS_PART } from '../../plugins/webhooks/config.js';
import { authSettings } from '../../plugins/auth/config.js';

function problems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration', () => {
  it('the default config file is valid, with security control on and about 12 machines of mixed types', () => {
    const { config } = loadConfig([], {});
    const { machines, groups } = gatewaySettings(config);
    expect(authSettings(config).securityControl).toBe(true);
    expect(machines.length).toBeGreaterThanOrEqual(10);
    expect(new Set(machines.map((m) => m.machineType)).size).toBeGreaterThanOrEqual(3);
    expect(new Set(machines.map((m) => m.system)).size).toBeGreaterThanOrEqual(3);
    expect(config.dataDir).toBe('./data');
    expect(groups.length).toBeGreaterThan(0);
  });

  it('GW-70 security control is enabled by default when the file does not mention it', () => {
    expect(authSettings(parseConfig({})).securityControl).toBe(true);
  });

  it('names the path, what was found and what is accepted', () => {
    const raw = JSON.parse(readFileSync(DEFAULT_CONFIG_FILE, 'utf8')) as { machines: Record<string, unknown>[] };
    (raw.machines[3] as Record<string, unknown>).port = 'abc';
    (raw.machines[1] as Record<string, unknown>).machineType = 'spaceship';
    const lines = problems(() => parseConfig(raw, 'plant.json'));
    expect(lines.some((l) => l.startsWith('machines[3].port: found "abc"') && /number/.test(l))).toBe(true);
    expect(lines.some((l) => l.startsWith('machines[1].machineType: found "spaceship"') && /lathe/.test(l) && /machiningCenter/.test(l))).toBe(true);
  });

  it('reports unknown fields, duplicate IDs and group members that are not machines', () => {
    const lines = problems(() =>
      parseConfig({
        colour: 'red',
        machines: [
          { machineID: 'A', name: 'a' },
          { machineID: 'A', name: 'b' },
        ],
        groups: [{ groupID: 'g', name: 'g', machineIDs: ['A', 'Z'] }],
      }),
    );
    expect(lines).toContain("(root): unknown field(s) 'colour'; remove them");
    expect(lines.some((l) => l.startsWith('machines[1].machineID') && l.includes("duplicate machineID 'A'"))).toBe(true);
    expect(lines.some((l) => l.startsWith('groups[0].machineIDs[1]') && l.includes("unknown machineID 'Z'"))).toBe(true);
  });

  it('never echoes a password found in a bad config', () => {
    const lines = problems(() => parseConfig({ machines: [{ machineID: 'A', name: 'a', password: 42 }] }));
    expect(lines.join('\n')).toContain('machines[0].password: found (hidden)');
    expect(lines.join('\n')).not.toContain('42');
  });

  it('rejects an unknown time zone with the accepted form', () => {
    const lines = problems(() => parseConfig({ gateway: { timeZone: 'Mars/Olympus' } }));
    expect(lines.join('\n')).toMatch(/gateway.timeZone: found "Mars\/Olympus"; timeZone must be an IANA time zone/);
  });

  it('dataDir and timeZone are every role\'s; gateway.dataDir and gateway.timeZone are still read as them, each with a notice', () => {
    const current = parseConfig({ dataDir: '/srv/plant', timeZone: 'Europe/Berlin' }, 'plant.json');
    expect([current.dataDir, current.timeZone, configNotices(current)]).toEqual(['/srv/plant', 'Europe/Berlin', []]);
    const old = parseConfig({ gateway: { name: 'plant-7', dataDir: '/srv/plant', timeZone: 'Europe/Berlin' } }, 'plant.json');
    expect([old.dataDir, old.timeZone, gatewaySettings(old).identity.name]).toEqual(['/srv/plant', 'Europe/Berlin', 'plant-7']);
    expect(configNotices(old)).toEqual([
      'config plant.json: gateway.dataDir is the old spelling of dataDir, read as it; write dataDir instead (the old spelling will stop being read)',
      'config plant.json: gateway.timeZone is the old spelling of timeZone, read as it; write timeZone instead (the old spelling will stop being read)',
    ]);
    // The old spellings are moved, not kept: the gateway section holds only its own fields.
    expect(gatewaySettings(old).identity.name).toBe('plant-7');
    expect(Object.keys((old as unknown as { gateway: object }).gateway)).not.toContain('dataDir');
    expect(parseConfig({ gateway: { dataDir: '/srv/plant' } }, 'x', { GATEWAY_DATA_DIR: '/tmp/a' }).dataDir).toBe('/tmp/a');
    expect(problems(() => parseConfig({ dataDir: '/a', gateway: { dataDir: '/b' } }, 'plant.json'))).toEqual(['gateway.dataDir: dataDir is given too; write only dataDir (gateway.dataDir is its old spelling)']);
    expect(problems(() => parseConfig({ timeZone: 'Mars/Olympus' }))[0]).toMatch(/^timeZone: found "Mars\/Olympus"; timeZone must be an IANA time zone/);
  });

  it('GATEWAY_PORT and GATEWAY_DATA_DIR override the file so two gateways can run side by side', () => {
    const a = parseConfig({}, 'x', { GATEWAY_PORT: '9001', GATEWAY_DATA_DIR: '/tmp/a' });
    const b = parseConfig({}, 'x', { GATEWAY_PORT: '9002', GATEWAY_DATA_DIR: '/tmp/b' });
    expect([gatewaySettings(a).listener.port, a.dataDir]).toEqual([9001, '/tmp/a']);
    expect([gatewaySettings(b).listener.port, b.dataDir]).toEqual([9002, '/tmp/b']);
    expect(problems(() => parseConfig({}, 'x', { GATEWAY_PORT: 'eighty' }))[0]).toMatch(/GATEWAY_PORT \(environment\): found "eighty"; expected an integer 0-65535/);
  });

  it('programs.webhooks.allowPrivateNetworks is off by default; the file or PROGRAMS_WEBHOOKS_ALLOW_PRIVATE_NETWORKS turns it on', () => {
    const webhooks = (...args: Parameters<typeof parseConfig>) => readPart(parseConfig(...args), WEBHOOKS_PART).webhooks;
    expect(webhooks({})).toEqual({ allowPrivateNetworks: false });
    expect(webhooks({ programs: { webhooks: { allowPrivateNetworks: true } } }).allowPrivateNetworks).toBe(true);
    expect(webhooks({}, 'x', { PROGRAMS_WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true' }).allowPrivateNetworks).toBe(true);
    expect(webhooks({ programs: { webhooks: { allowPrivateNetworks: true } } }, 'x', { PROGRAMS_WEBHOOKS_ALLOW_PRIVATE_NETWORKS: '0' }).allowPrivateNetworks).toBe(false);
    expect(problems(() => parseConfig({}, 'x', { PROGRAMS_WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'yes' }))[0]).toMatch(/PROGRAMS_WEBHOOKS_ALLOW_PRIVATE_NETWORKS \(environment\): found "yes"; expected true, false, 1 or 0/);
  });

  it('--config FILE selects the file, and a missing or broken file is reported with its path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-config-'));
    const file = join(dir, 'plant.json');
    writeFileSync(file, JSON.stringify({ gateway: { name: 'plant-7' } }));
    expect(configFileFromArgs(['--config', file])).toBe(file);
    expect(configFileFromArgs([`--config=${file}`])).toBe(file);
    expect(gatewaySettings(loadConfig(['--config', file], {}).config).identity.name).toBe('plant-7');
    writeFileSync(file, '{ not json');
    expect(() => loadConfig(['--config', file], {})).toThrow(new RegExp(`invalid configuration in ${file}[\\s\\S]*not valid JSON`));
    expect(() => loadConfig(['--config', join(dir, 'missing.json')], {})).toThrow(/missing.json[\s\S]*cannot read it \(ENOENT\)/);
    expect(() => configFileFromArgs(['--config'])).toThrow(/expected a file path after --config/);
  });
});

describe('configuration errors and secrets', () => {
  it('never echoes a password nested inside a value it quotes', () => {
    const lines = problems(() => parseConfig({ machines: { machineID: 'A', password: 'hunter2' } }));
    expect(lines.join('\n')).toMatch(/^machines: found \{"machineID":"A","password":"\(hidden\)"\}; expected array/);
    expect(lines.join('\n')).not.toContain('hunter2');
  });
});
