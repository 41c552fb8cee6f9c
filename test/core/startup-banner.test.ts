/**
 * The start-up banner tells a first-time user which URLs open without a
 * token and which need `Authorization: Bearer`; the labels must be true of
 * the running gateway, README's sample must be what the banner prints, and
 * the log-in line must name the field the login response really carries.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { networkUrls, rolesBanner } from '../../core/runtime/startup-banner.js';
import { cloudBannerSection } from '../../core/roles/cloud/banner.js';
import { bannerUrlLines, gatewayBannerSection, startupBanner } from '../../core/roles/gateway/banner.js';
import { programsBannerSection } from '../../core/roles/programs/banner.js';
import { startTestGateway, TEST_ADMIN_PASSWORD, type TestGateway } from '../fixtures/gateway.js';

const ROOT = resolve(import.meta.dirname, '../..');

describe('start-up banner', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw.stop();
  });

  it('each URL is marked "no token" or "Bearer token", and the mark is what the gateway answers without a token', async () => {
    const lines = bannerUrlLines('');
    expect(lines.map((l) => l.match(/ (\/\S*) {2}/)?.[1])).toEqual(
      expect.arrayContaining(['/', '/api/docs', '/api/health', '/api/config/machines', '/mcp']),
    );
    for (const line of lines) {
      const [, path, access] = line.match(/ (\/\S*) {2}\((no token|Bearer token)[;)]/) ?? [];
      expect(path, line).toBeDefined();
      // MCP clients POST JSON-RPC to /mcp; a GET there is 405 before any credential check.
      const res =
        path === '/mcp'
          ? await gw.gateway.http.inject({
              method: 'POST',
              url: path,
              headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
              payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
            })
          : await gw.gateway.http.inject({ method: 'GET', url: path as string });
      if (access === 'no token') expect(res.statusCode, line).not.toBe(401);
      else expect(res.statusCode, line).toBe(401);
    }
  });

  it("README's sample output is the banner's URL block for http://localhost:8080 with the MTConnect agent on :5000", () => {
    const readme = readFileSync(resolve(ROOT, 'README.md'), 'utf8');
    const expected = bannerUrlLines('http://localhost:8080', 'http://localhost:5000').join('\n');
    expect(readme).toContain(`\`\`\`\n${expected}\n`);
  });

  it('the log-in line says the response carries "token" at the top level, and it does', async () => {
    const banner = startupBanner({
      version: '0',
      configFile: 'c.json',
      dataDir: 'data',
      timeZone: 'UTC',
      machines: [],
      url: 'http://localhost:8080',
      announcements: gw.gateway.context.announcements,
    });
    expect(banner).toContain('POST /api/auth/login {"username","password"} → {"token": ...}');
    const readme = readFileSync(resolve(ROOT, 'README.md'), 'utf8');
    const loginLine = banner.split('\n').find((l) => l.includes('POST /api/auth/login'));
    expect(readme).toContain(loginLine);
    const res = await gw.request('POST', '/api/auth/login', { username: 'admin', password: TEST_ADMIN_PASSWORD }, { token: null });
    expect(typeof res.body.token).toBe('string');
  });
});

describe('start-up banner with several roles', () => {
  const gatewayFacts = {
    version: '1.2.3',
    configFile: '/etc/plant.json',
    dataDir: '/var/lib/gateway',
    timeZone: 'Europe/Berlin',
    machines: [{ driver: 'opcua' }, { driver: 'opcua' }, { driver: 'modbus' }],
    url: 'http://localhost:8080',
    announcements: ['administrator: first password ...'],
  };
  const programsFacts = {
    version: '1.2.3',
    configFile: '/etc/plant.json',
    dataDir: '/var/lib/gateway',
    timeZone: 'Europe/Berlin',
    url: 'http://localhost:8030',
    announcements: ['program service administrator: first password ...'],
  };

  it('the program service section says where it runs: its console, terminal, API, docs and OpenAPI URLs with their token marks, its data file and its announcements', () => {
    expect(programsBannerSection(programsFacts)).toEqual([
      '  Program version service 1.2.3 is running',
      '  config:      /etc/plant.json',
      '  data:        /var/lib/gateway (SQLite: programs.db)',
      '  time zone:   Europe/Berlin',
      '',
      '  console:     http://localhost:8030/  (no token; programs, approvals, deployments, drift, audit; log in there)',
      '  terminal:    http://localhost:8030/terminal  (no token; the shop-floor terminal, log in there)',
      '  API:         http://localhost:8030/api/v1  (session cookie or Bearer token)',
      '  API docs:    http://localhost:8030/api/docs  (no token)',
      '  OpenAPI:     http://localhost:8030/openapi/v1.json  (no token)',
      '',
      '  program service administrator: first password ...',
      '',
    ]);
    expect(programsBannerSection({ ...programsFacts, announcements: [], databaseFile: 'other.db' }).slice(2, 3)).toEqual(['  data:        /var/lib/gateway (SQLite: other.db)']);
    expect(programsBannerSection({ ...programsFacts, announcements: [] }).at(-1)).toBe('');
  });

  it('the program service section on PostgreSQL names the server and database, never a password', () => {
    expect(programsBannerSection({ ...programsFacts, postgres: 'postgresql://db.plant:5432/programs' }).slice(2, 4)).toEqual([
      '  data:        /var/lib/gateway',
      '  database:    PostgreSQL postgresql://db.plant:5432/programs',
    ]);
  });

  it('a listener bound to every address names the URLs a user on the network opens: the host name and the addresses that are not loopback', () => {
    const nic = (address: string, family: 'IPv4' | 'IPv6', internal = false) => ({ address, family, internal, netmask: '', mac: '', cidr: null, ...(family === 'IPv6' ? { scopeid: 0 } : {}) }) as never;
    const interfaces = { lo: [nic('127.0.0.1', 'IPv4', true), nic('::1', 'IPv6', true)], eth0: [nic('10.4.2.17', 'IPv4'), nic('fe80::1', 'IPv6'), nic('fd00::17', 'IPv6')] };
    expect(networkUrls('https://localhost:8080', '0.0.0.0', interfaces, 'gw-hall3')).toEqual(['https://gw-hall3:8080', 'https://10.4.2.17:8080']);
    expect(networkUrls('http://localhost:8030', '::', interfaces, 'gw-hall3')).toEqual(['http://gw-hall3:8030', 'http://10.4.2.17:8030', 'http://[fd00::17]:8030']);
    // Bound to one address, its own URL is the one that answers.
    expect(networkUrls('http://127.0.0.1:8080', '127.0.0.1', interfaces, 'gw-hall3')).toEqual([]);
    expect(gatewayBannerSection({ ...gatewayFacts, networkUrls: ['http://gw-hall3:8080', 'http://10.4.2.17:8080'] })).toContain('  on the network: http://gw-hall3:8080, http://10.4.2.17:8080');
    expect(programsBannerSection({ ...programsFacts, networkUrls: ['http://gw-hall3:8030'] })).toContain('  on the network: http://gw-hall3:8030');
    expect(gatewayBannerSection(gatewayFacts).some((line) => line.includes('on the network'))).toBe(false);
  });

  it('the cloud relay section shows its network URLs and a metrics token made at this start', () => {
    const section = cloudBannerSection({ version: '1.2.3', configFile: '/etc/plant.json', dataDir: '/var/lib/cnc', url: 'http://localhost:8040', brokerUrl: 'mqtt://0.0.0.0:1883', embedded: true, tokens: 2, networkUrls: ['http://relay:8040'], announcements: ['metrics token:  mtk_x'] });
    expect(section).toContain('  on the network: http://relay:8040');
    expect(section.slice(-2)).toEqual(['  metrics token:  mtk_x', '']);
  });

  it('the gateway section says where it runs: data file, machines by driver, its URLs and announcements', () => {
    const section = gatewayBannerSection(gatewayFacts);
    expect(section.slice(0, 5)).toEqual([
      '  CNC machine gateway 1.2.3 is running',
      '  config:      /etc/plant.json',
      '  data:        /var/lib/gateway (SQLite: gateway.db)',
      '  time zone:   Europe/Berlin',
      '  machines:    3 (opcua 2, modbus 1)',
    ]);
    expect(section).toEqual(expect.arrayContaining(bannerUrlLines('http://localhost:8080')));
    expect(section.slice(-2)).toEqual(['  administrator: first password ...', '']);
  });

  it('one banner holds a section per role in the order given, and says once how to stop; the gateway alone prints what it always printed', () => {
    const banner = rolesBanner([gatewayBannerSection(gatewayFacts), programsBannerSection(programsFacts)]);
    const lines = banner.split('\n');
    expect(lines.filter((l) => l.includes('is running'))).toEqual(['  CNC machine gateway 1.2.3 is running', '  Program version service 1.2.3 is running']);
    expect(lines.filter((l) => l.includes('Press Ctrl-C'))).toHaveLength(1);
    expect(banner.endsWith('  Press Ctrl-C to stop.\n\n')).toBe(true);
    // Sections are separated by exactly one blank line.
    expect(banner).toContain('first password ...\n\n  Program version service');
    expect(banner).not.toContain('\n\n\n');
    expect(startupBanner(gatewayFacts)).toBe(rolesBanner([gatewayBannerSection(gatewayFacts)]));
    expect(startupBanner(gatewayFacts).startsWith('\n  CNC machine gateway 1.2.3 is running\n')).toBe(true);
  });
});
