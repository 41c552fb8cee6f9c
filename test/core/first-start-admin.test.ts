/**
 * The first administrators of the roles `npm start` runs together (the
 * gateway's auth plugin, the program service's accounts plugin): one
 * generated password printed once at the end of the banner, naming the login
 * of each console, that logs in to both; ADMIN_PASSWORD for both; a role's
 * own variable winning for that role; nothing printed at a later start; a
 * role started alone as before. The roles run as `npm start` runs them
 * (core/runtime/role.ts startRoles with the real role list) at the production scrypt
 * cost, and the password never reaches the log.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startRoles, type RunningRoles } from '../../core/runtime/role.js';
import { parseConfig, ROLES } from '../../core/roles/index.js';
import { rolesBanner } from '../../core/runtime/startup-banner.js';

const TIMEOUT = 120_000;
let logged = '';
const logger = pino({ level: 'info' }, { write: (line: string) => void (logged += line) });

let running: RunningRoles | undefined;
afterEach(async () => {
  for (const part of running?.stopParts ?? []) await part.stop();
  running = undefined;
  logged = '';
});

function newDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'first-start-admin-'));
}

/** Starts `roles` on `dataDir` with exactly `env`; answers the printed banner. */
async function start(dataDir: string, env: NodeJS.ProcessEnv, roles = ['gateway', 'programs']): Promise<string> {
  const config = parseConfig({
    dataDir,
    timeZone: 'UTC',
    communication: { host: '127.0.0.1', port: 0 },
    programs: { host: '127.0.0.1', port: 0 },
    mtconnect: { host: '127.0.0.1', port: 0 },
    logLevel: 'info',
    machines: [{ machineID: 'M1', name: 'Mill 1', driver: 'simulator' }],
  });
  running = await startRoles(ROLES, roles, { config, file: 'plant.json', logger, env });
  return rolesBanner(running.banners);
}

async function stop(): Promise<void> {
  for (const part of running?.stopParts ?? []) await part.stop();
  running = undefined;
}

/** The console URLs of the banner's sections, in start order (gateway, then program service). */
function consoles(banner: string): string[] {
  return [...banner.matchAll(/^ {2}console: +(http:\/\/\S+)\/ /gm)].map((m) => m[1] as string);
}

async function gatewayLogin(url: string, password: string): Promise<number> {
  const res = await fetch(`${url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password }) });
  const body = (await res.json()) as { token?: unknown };
  return res.status === 200 && typeof body.token === 'string' ? 200 : res.status;
}

async function programsLogin(url: string, password: string): Promise<number> {
  const res = await fetch(`${url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password }) });
  await res.arrayBuffer();
  return res.status;
}

describe('first-start administrators of the roles started together', () => {
  it('both roles at first start: one generated password, printed once with the login of each console, logs in to both; never logged; not printed again', { timeout: TIMEOUT }, async () => {
    const dataDir = newDataDir();
    const banner = await start(dataDir, {});
    const [gatewayUrl, programsUrl] = consoles(banner) as [string, string];
    const block = /^ {2}first start: +one administrator password for both consoles, shown once: (\S+)$/m.exec(banner);
    expect(block, banner).not.toBeNull();
    const password = (block as RegExpExecArray)[1] as string;
    expect(banner.split(password)).toHaveLength(2);
    expect(banner).toContain(`    fleet console:   ${gatewayUrl}/  user 'admin'\n    program console: ${programsUrl}/  user 'admin'\n`);
    expect(banner.match(/administrator: {2}'admin', password: the first-start password printed at the end/g)).toHaveLength(2);

    expect(await gatewayLogin(gatewayUrl, password)).toBe(200);
    expect(await programsLogin(programsUrl, password)).toBe(200);
    expect(logged).toContain('first administrator created');
    expect(logged).not.toContain(password);

    await stop();
    const again = await start(dataDir, {});
    expect(again).not.toContain(password);
    expect(again).not.toMatch(/first start|shown once|administrator:/);
    const [gatewayAgain, programsAgain] = consoles(again) as [string, string];
    expect(await gatewayLogin(gatewayAgain, password)).toBe(200);
    expect(await programsLogin(programsAgain, password)).toBe(200);
  });

  it('ADMIN_PASSWORD sets both administrators, and no password is printed', { timeout: TIMEOUT }, async () => {
    const banner = await start(newDataDir(), { ADMIN_PASSWORD: 'one-plant-password' });
    expect(banner.match(/administrator: {2}'admin', password from ADMIN_PASSWORD/g)).toHaveLength(2);
    // The one secret shown is the metrics token made at this first start (once, by the role that made it).
    expect(banner.match(/metrics token: +mtk_/g)).toHaveLength(1);
    expect(banner.split('\n').filter((line) => !line.includes('metrics token:')).join('\n')).not.toMatch(/first start|shown once/);
    const [gatewayUrl, programsUrl] = consoles(banner) as [string, string];
    expect(await gatewayLogin(gatewayUrl, 'one-plant-password')).toBe(200);
    expect(await programsLogin(programsUrl, 'one-plant-password')).toBe(200);
  });

  it("a role's own variable wins over ADMIN_PASSWORD for that role", { timeout: TIMEOUT }, async () => {
    const banner = await start(newDataDir(), { ADMIN_PASSWORD: 'one-plant-password', PROGRAMS_ADMIN_PASSWORD: 'programs-own-password' });
    expect(banner).toContain("administrator:  'admin', password from ADMIN_PASSWORD");
    expect(banner).toContain("administrator:  'admin', password from PROGRAMS_ADMIN_PASSWORD");
    const [gatewayUrl, programsUrl] = consoles(banner) as [string, string];
    expect(await gatewayLogin(gatewayUrl, 'one-plant-password')).toBe(200);
    expect(await programsLogin(programsUrl, 'programs-own-password')).toBe(200);
    expect(await programsLogin(programsUrl, 'one-plant-password')).toBe(401);
  });

  it("with only one role's variable set, the other takes the shared password, printed for its console alone", { timeout: TIMEOUT }, async () => {
    const banner = await start(newDataDir(), { GATEWAY_ADMIN_PASSWORD: 'gateway-own-password' });
    const [gatewayUrl, programsUrl] = consoles(banner) as [string, string];
    const block = /^ {2}first start: +one administrator password for the console, shown once: (\S+)\n {4}program console: (\S+) {2}user 'admin'$/m.exec(banner);
    expect(block, banner).not.toBeNull();
    expect(block?.[2]).toBe(`${programsUrl}/`);
    expect(banner).not.toContain('fleet console:');
    expect(await gatewayLogin(gatewayUrl, 'gateway-own-password')).toBe(200);
    expect(await programsLogin(programsUrl, (block as RegExpExecArray)[1] as string)).toBe(200);
  });

  it('a role started alone generates and prints its own password as before, and honours ADMIN_PASSWORD', { timeout: TIMEOUT }, async () => {
    const banner = await start(newDataDir(), {}, ['gateway']);
    expect(banner).not.toContain('first start');
    const own = /administrator: {2}'admin', password (\S+) {2}\(shown once; change it with POST \/api\/auth\/change-password\)/.exec(banner);
    expect(own, banner).not.toBeNull();
    expect(await gatewayLogin(consoles(banner)[0] as string, (own as RegExpExecArray)[1] as string)).toBe(200);
    await stop();

    const alone = await start(newDataDir(), { ADMIN_PASSWORD: 'one-plant-password' }, ['programs']);
    expect(alone).toContain("administrator:  'admin', password from ADMIN_PASSWORD");
    expect(await programsLogin(consoles(alone)[0] as string, 'one-plant-password')).toBe(200);
  });

  it('an ADMIN_PASSWORD shorter than the minimum stops the start, naming the variable', { timeout: TIMEOUT }, async () => {
    await expect(start(newDataDir(), { ADMIN_PASSWORD: 'short' })).rejects.toThrow(/ADMIN_PASSWORD must have at least 10 characters/);
  });
});
