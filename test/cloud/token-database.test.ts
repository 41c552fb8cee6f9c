/**
 * Where the cloud keeps its tokens: a PostgreSQL connection string that is
 * not one, or a server that does not answer, stops the start (and the
 * cloud-token command) naming the key it came from and never the password;
 * and a revocation written to the database by another process (another
 * instance, the CLI) reaches a running cloud through its revocation feed:
 * the gateway is unavailable and disconnected from the embedded broker
 * within seconds, long before the revoked-token sweep would.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLOUD_MIGRATIONS, GatewayTokens, VERIFIED_TTL_MS } from '../../core/roles/cloud/tokens.js';
import { Database } from '../../core/store/database.js';
import { applyMigrations, BASE_SCHEMA_OWNER } from '../../core/store/migrations.js';
import { lightLink, startTestCloud, untilOnline } from '../fixtures/cloud.js';
import { parseConfig } from '../../core/roles/index.js';
import { freePort } from '../fixtures/free-port.js';
import { connectMcp } from '../fixtures/mcp-client.js';
import { TOKEN_CHECK_UNAVAILABLE_TEXT } from '../../plugins/cloud-mcp/index.js';

const ROOT = resolve(import.meta.dirname, '../..');
const PASSWORD = 'Sup3r-s3cret-pw';

describe('the cloud\'s token database', () => {
  it('a connection string that is not PostgreSQL\'s stops the start naming cloud.databaseUrl, without the password', async () => {
    const started = startTestCloud({ databaseUrl: `mysql://cloud:${PASSWORD}@db.example/cloud`, env: {} });
    await expect(started).rejects.toThrow(/^cloud\.databaseUrl: not a PostgreSQL connection string/);
    await expect(started).rejects.not.toThrow(new RegExp(PASSWORD));
    await expect(startTestCloud({ env: { CLOUD_DATABASE_URL: `postgresql://cloud:${PASSWORD}@[bad` } })).rejects.toThrow(/^CLOUD_DATABASE_URL: not a PostgreSQL connection string/);
    // In the configuration file too: no bound of the schema prints the value.
    for (const databaseUrl of ['', `postgresql://cloud:${PASSWORD}@db.example/${'d'.repeat(5000)}`]) {
      const error = await startTestCloud({ config: parseConfig({ dataDir: mkdtempSync(join(tmpdir(), 'cloud-cfg-')), cloud: { databaseUrl } }, 'cloud.json'), env: {} }).catch((err: Error) => err);
      expect((error as Error).message).toMatch(/^cloud\.databaseUrl: not a PostgreSQL connection string/);
      expect((error as Error).message).not.toContain(PASSWORD);
    }
  });

  it('a server that does not answer stops the start naming CLOUD_DATABASE_URL and the server, without the password', async () => {
    const port = await freePort();
    const error = await startTestCloud({ databaseUrl: 'postgresql://ignored@127.0.0.1/x', env: { CLOUD_DATABASE_URL: `postgresql://cloud:${PASSWORD}@127.0.0.1:${port}/tokens` } }).catch((err: Error) => err);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(new RegExp(`^CLOUD_DATABASE_URL: cannot connect to PostgreSQL at postgresql://127\\.0\\.0\\.1:${port}/tokens`));
    expect(JSON.stringify({ message: (error as Error).message, cause: String((error as Error).cause) })).not.toContain(PASSWORD);
  });

  it('npm run cloud-token with CLOUD_DATABASE_URL opens that database, and its errors name the key without the password', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cloud-cli-pg-'));
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ dataDir: dir }));
    const port = await freePort();
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'core/main.ts', 'cloud-token', 'list', '--config', config], {
      cwd: ROOT, encoding: 'utf8', env: { ...process.env, GATEWAY_DATA_DIR: '', CLOUD_DATABASE_URL: `postgresql://cloud:${PASSWORD}@127.0.0.1:${port}/tokens` },
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/CLOUD_DATABASE_URL: cannot connect to PostgreSQL at postgresql:\/\/127\.0\.0\.1:\d+\/tokens/);
    expect(r.stdout + r.stderr).not.toContain(PASSWORD);
  }, 30_000);

  it('while the tokens\' database does not answer, a tool call is a tool error saying so (no 5xx), listing tools still works, and the admin interface answers 503', async () => {
    const cloud = await startTestCloud();
    const { token } = await cloud.tokens.create('plant-d');
    const adminKey = (await cloud.adminKeys.create('ops')).token;
    const url = await cloud.listen('127.0.0.1', 0);
    const session = await connectMcp(url, undefined, { accesstoken: token });
    try {
      // The database goes away under the running cloud (a PostgreSQL server restarting, a network cut).
      await cloud.context.tokenDb.close();
      // A success remembered from the session's start holds for its lifetime; then the database is asked.
      await new Promise((r) => setTimeout(r, VERIFIED_TTL_MS + 50));
      expect(await session.call('list_machines')).toMatchObject({ isError: true, text: TOKEN_CHECK_UNAVAILABLE_TEXT });
      expect((await session.client.listTools()).tools.length).toBeGreaterThan(0);
      const plain = await fetch(new URL('/mcp', url), {
        method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', accesstoken: token },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'list_groups', arguments: {} } }),
      });
      expect(plain.status).toBe(200);
      expect(await plain.text()).toContain('its token database does not answer');
      const listed = await fetch(new URL('/admin/gateway-tokens', url), { headers: { authorization: `Bearer ${adminKey}` } });
      expect([listed.status, await listed.json()]).toEqual([503, { error: 'database_unavailable', message: expect.stringMatching(/retry in a moment/) }]);
    } finally {
      await session.close();
      await cloud.stop().catch(() => undefined);
    }
  }, 30_000);

  it('a token revoked by another process on the same database: the running cloud marks its gateway unavailable and disconnects it within 5 s', async () => {
    // The sweep would take a minute: only the revocation feed can be this quick.
    const cloud = await startTestCloud({ revocationSweepMs: 60_000, revocationPollMs: 500 });
    const other = await Database.open(join(cloud.context.dataDir, 'cloud.db'));
    try {
      await applyMigrations(other, BASE_SCHEMA_OWNER, CLOUD_MIGRATIONS);
      const elsewhere = await GatewayTokens.open(other);
      const { token, record } = await elsewhere.create('plant-e');
      const link = await lightLink(cloud.brokerUrl as string, token);
      await untilOnline(cloud, token);
      const closed = new Promise<number>((resolve) => link.once('close', () => resolve(Date.now())));
      const revokedAt = Date.now();
      expect(await elsewhere.revoke(record.id)).toBe(true);
      expect((await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(Infinity), 6000))])) - revokedAt).toBeLessThan(5000);
      expect(cloud.relay.isOnline(record.id)).toBe(false);
      expect(await cloud.tokens.verify(token)).toBeUndefined();
      await link.endAsync(true);
    } finally {
      await other.close();
      await cloud.stop();
    }
  }, 30_000);
});
