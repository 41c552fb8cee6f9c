/**
 * Which roles a process runs: `--role` (repeatable, comma lists), else the
 * config file's `roles` (both by default); a bad value stops the start naming
 * where it was found and what is accepted. The process itself refuses a role
 * this build does not include when it is named, and runs without it when it
 * is only the default.
 */
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, rolesFromArgs, selectRoles } from '../../core/config/config.js';
import { parseConfig, ROLES } from '../../core/roles/index.js';
import { readPart } from '../../core/config/config-parts.js';
import { programsSettings } from '../../core/roles/programs/config.js';
import { DEPLOYMENTS_PART } from '../../plugins/deployments/config.js';
import { GATEWAYS_PART } from '../../plugins/gateways/config.js';
import { WEBHOOKS_PART } from '../../plugins/webhooks/config.js';
import { DEFAULT_RATE_LIMITS } from '../../core/http/rate-limit.js';

/** The roles of this build, in list order: what --role and the config's roles accept. */
const NAMES = ROLES.map((r) => r.name);

const ACCEPTED = 'expected one of "gateway"|"programs"|"cloud" (repeat --role, or give a comma list: --role gateway,programs,cloud)';

function problems(run: () => unknown): string[] {
  try {
    run();
  } catch (err) {
    if (err instanceof ConfigError) return [err.file, ...err.problems];
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('--role', () => {
  it('takes one role, a comma list, repeats and the --role=NAME form; answers in one order, each role once', () => {
    expect(rolesFromArgs(['--role', 'gateway'], NAMES)).toEqual(['gateway']);
    expect(rolesFromArgs(['--role', 'programs'], NAMES)).toEqual(['programs']);
    expect(rolesFromArgs(['--role', 'programs,gateway'], NAMES)).toEqual(['gateway', 'programs']);
    expect(rolesFromArgs(['--role=programs', '--config', 'x.json', '--role', 'gateway'], NAMES)).toEqual(['gateway', 'programs']);
    expect(rolesFromArgs(['--role', ' gateway , gateway'], NAMES)).toEqual(['gateway']);
    expect(rolesFromArgs(['--config', 'x.json'], NAMES)).toBeUndefined();
  });

  it('a bad value names --role, what was found and what is accepted', () => {
    expect(problems(() => rolesFromArgs(['--role', 'gateway,relay'], NAMES))).toEqual(['(command line)', `--role: found "relay"; ${ACCEPTED}`]);
    expect(problems(() => rolesFromArgs(['--role='], NAMES))).toEqual(['(command line)', `--role: found ""; ${ACCEPTED}`]);
    expect(problems(() => rolesFromArgs(['--role'], NAMES))).toEqual(['(command line)', `--role: found nothing; ${ACCEPTED}`]);
    expect(problems(() => rolesFromArgs(['--role', '--config', 'x.json'], NAMES))).toEqual(['(command line)', `--role: found nothing; ${ACCEPTED}`]);
  });

  it('quotes at most a bounded part of a long bad value, and at most five of many', () => {
    const [, first, ...rest] = problems(() => rolesFromArgs(['--role', ['x'.repeat(10_000), ...Array.from({ length: 50 }, (_, i) => `r${i}`)].join(',')], NAMES));
    expect((first as string).length).toBeLessThan(400);
    expect(rest).toHaveLength(4);
  });
});

describe('config roles', () => {
  it('defaults to both roles; --role overrides the file; the selection says what named the roles', () => {
    const defaulted = parseConfig({});
    expect(defaulted.roles).toEqual(['gateway', 'programs']);
    expect(selectRoles([], defaulted, NAMES)).toEqual({ roles: ['gateway', 'programs'], from: 'default' });
    const written = parseConfig({ roles: ['programs', 'gateway'] });
    expect(selectRoles([], written, NAMES)).toEqual({ roles: ['gateway', 'programs'], from: 'config' });
    const gatewayOnly = parseConfig({ roles: ['gateway'] });
    expect(selectRoles([], gatewayOnly, NAMES)).toEqual({ roles: ['gateway'], from: 'config' });
    expect(selectRoles(['--role', 'programs'], gatewayOnly, NAMES)).toEqual({ roles: ['programs'], from: 'command line' });
  });

  it('a bad roles entry names the file and its path: unknown name, empty list, not a list, a role twice', () => {
    expect(problems(() => parseConfig({ roles: ['gateway', 'relay'] }, 'plant.json'))).toEqual(['plant.json', 'roles[1]: found "relay"; expected one of "gateway"|"programs"|"cloud"']);
    expect(problems(() => parseConfig({ roles: [] }, 'plant.json'))).toEqual(['plant.json', 'roles: found []; roles must name at least one of "gateway", "programs", "cloud"']);
    expect(problems(() => parseConfig({ roles: 'gateway' }, 'plant.json'))).toEqual(['plant.json', 'roles: found "gateway"; expected array, received string']);
    expect(problems(() => parseConfig({ roles: ['gateway', 'gateway'] }, 'plant.json'))).toEqual(['plant.json', "roles[1]: found \"gateway\"; role 'gateway' is named twice; name each role once"]);
  });

  it('programs: host and port (8030) default; PROGRAMS_PORT overrides the port; a bad one names the variable', () => {
    expect(programsSettings(parseConfig({}))).toEqual({ host: '0.0.0.0', port: 8030, rateLimits: DEFAULT_RATE_LIMITS });
    // The plugins' own fields of the section, with their defaults.
    const plain = parseConfig({});
    expect({ ...readPart(plain, WEBHOOKS_PART), ...readPart(plain, GATEWAYS_PART), ...readPart(plain, DEPLOYMENTS_PART) }).toEqual({ webhooks: { allowPrivateNetworks: false }, gatewaySync: { intervalSec: 300 }, deployments: { leaseSec: 30 } });
    expect(programsSettings(parseConfig({ programs: { host: '127.0.0.1', port: 9030 } }, 'p.json', { PROGRAMS_PORT: '0' }))).toEqual({ host: '127.0.0.1', port: 0, rateLimits: DEFAULT_RATE_LIMITS });
    expect(programsSettings(parseConfig({ programs: { port: 9030 } }, 'p.json', { PROGRAMS_PORT: '' })).port).toBe(9030);
    expect(problems(() => parseConfig({}, 'p.json', { PROGRAMS_PORT: '80x' }))).toEqual(['p.json', 'PROGRAMS_PORT (environment): found "80x"; expected an integer 0-65535']);
    expect(problems(() => parseConfig({ programs: { port: 70_000 } }, 'p.json'))).toEqual(['p.json', 'programs.port: found 70000; Too big: expected number to be <=65535']);
    expect(problems(() => parseConfig({ programs: { certificate: 'x' } }, 'p.json'))[1]).toMatch(/^programs: .*unknown field\(s\) 'certificate'/);
    expect(problems(() => parseConfig({ programs: { tls: true } }, 'p.json'))[1]).toBe('programs.tls: found true; expected object, received boolean');
    expect(readPart(parseConfig({ programs: { deployments: { leaseSec: 5 } } }), DEPLOYMENTS_PART).deployments).toEqual({ leaseSec: 5 });
    expect(problems(() => parseConfig({ programs: { deployments: { leaseSec: 1 } } }, 'p.json'))[1]).toMatch(/^programs\.deployments\.leaseSec: found 1; .*>=2/);
    expect(problems(() => parseConfig({ programs: { deployments: { leaseSec: 2.5 } } }, 'p.json'))[1]).toMatch(/^programs\.deployments\.leaseSec: found 2\.5; /);
    expect(problems(() => parseConfig({ programs: { tls: { certFile: 'cert.pem' } } }, 'p.json'))[1]).toMatch(/^programs\.tls\.keyFile: /);
  });
});

const ROOT = resolve(import.meta.dirname, '../..');

/** Runs `npm start`'s entry with `args` (and `env` over the usual test environment) until it exits; returns its exit code and output. */
function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'core/main.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, GATEWAY_PORT: '', GATEWAY_DATA_DIR: '', PROGRAMS_PORT: '0', MTCONNECT_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((r) => child.on('exit', (code) => r({ code, output })));
}

describe('the process', () => {
  it('a role whose port is taken exits 1 naming the environment variable and the config field that move it', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = String((taken.address() as AddressInfo).port);
    try {
      const dataDir = mkdtempSync(join(tmpdir(), 'roles-'));
      const file = join(dataDir, 'config.json');
      writeFileSync(file, JSON.stringify({ gateway: { dataDir, timeZone: 'UTC' }, communication: { host: '127.0.0.1' }, programs: { host: '127.0.0.1' }, cloud: { host: '127.0.0.1', mqttHost: '127.0.0.1' } }));
      const [gateway, programs, cloud] = await Promise.all([
        run(['--config', file, '--role', 'gateway'], { GATEWAY_PORT: port }),
        run(['--config', file, '--role', 'programs'], { PROGRAMS_PORT: port }),
        run(['--config', file, '--role', 'cloud'], { CLOUD_PORT: port, CLOUD_MQTT_PORT: '0' }),
      ]);
      const inUse = (role: string, variable: string, field: string) =>
        `${role} failed to listen on 127.0.0.1:${port}: the port is in use by another process; choose another with ${variable}=<port> or ${field} in ${file}`;
      expect(gateway).toEqual({ code: 1, output: expect.stringContaining(inUse('gateway', 'GATEWAY_PORT', 'communication.port')) });
      expect(programs).toEqual({ code: 1, output: expect.stringContaining(inUse('program service', 'PROGRAMS_PORT', 'programs.port')) });
      expect(cloud).toEqual({ code: 1, output: expect.stringContaining(inUse('cloud relay', 'CLOUD_PORT', 'cloud.port')) });
    } finally {
      await new Promise((r) => taken.close(r));
    }
  }, 60_000);

  it('a bad --role exits 2 naming --role before anything starts', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'roles-'));
    const file = join(dataDir, 'config.json');
    writeFileSync(file, JSON.stringify({ gateway: { dataDir } }));
    const { code, output } = await run(['--config', file, '--role', 'gateway,relay']);
    expect(code).toBe(2);
    expect(output).toContain(`invalid configuration in (command line):\n  - --role: found "relay"; ${ACCEPTED}`);
    expect(output).not.toContain('is running');
  }, 30_000);

  it('--role gateway overrides the file: the gateway alone runs, with its banner section, and stops cleanly on SIGINT', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'roles-'));
    const file = join(dataDir, 'config.json');
    writeFileSync(file, JSON.stringify({ roles: ['programs'], gateway: { dataDir, timeZone: 'UTC' }, communication: { host: '127.0.0.1', port: 0 } }));
    const child = spawn(process.execPath, ['--import', 'tsx', 'core/main.ts', '--config', file, '--role', 'gateway'], {
      cwd: ROOT,
      env: { ...process.env, GATEWAY_PORT: '', GATEWAY_DATA_DIR: '', PROGRAMS_PORT: '0', MTCONNECT_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const end = Date.now() + 20_000;
    while (!output.includes('Press Ctrl-C to stop') && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(output).toMatch(/CNC machine gateway \S+ is running/);
    expect(output).not.toContain('Program version service');
    expect(output).toContain('stopped cleanly');
  }, 30_000);
});
