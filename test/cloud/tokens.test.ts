/**
 * Gateway tokens from the command line (`npm run cloud-token`): made, listed,
 * rotated and revoked in cloud.db, shown once and stored as a hash; and a
 * relayed call that passes its deadline ends as a timeout, its late answer
 * dropped.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLOUD_MIGRATIONS, GatewayTokens, VERIFIED_TTL_MS } from '../../core/roles/cloud/tokens.js';
import { Database } from '../../core/store/database.js';
import { applyMigrations, BASE_SCHEMA_OWNER } from '../../core/store/migrations.js';
import { simMachine, startTestGateway } from '../fixtures/gateway.js';
import { startTestCloud, untilOnline } from '../fixtures/cloud.js';

const ROOT = resolve(import.meta.dirname, '../..');
const cli = (config: string, ...args: string[]) => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'core/main.ts', 'cloud-token', ...args, '--config', config], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, GATEWAY_DATA_DIR: '' } });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

describe('gateway tokens', () => {
  it('GW-85 npm run cloud-token makes, lists, rotates and revokes tokens; the token is shown once and only its hash is stored', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cloud-cli-'));
    const config = join(dataDir, 'config.json');
    writeFileSync(config, JSON.stringify({ gateway: { dataDir } }));
    const made = cli(config, 'create', 'plant-a');
    expect(made.code).toBe(0);
    const token = /cgw_[0-9a-f]{12}_[A-Za-z0-9_-]{43}/.exec(made.out)?.[0] as string;
    expect(token).toBeTruthy();
    const id = token.split('_')[1] as string;
    expect(cli(config, 'list').out).toMatch(new RegExp(`${id}  plant-a  created .*  valid`));
    const db = await Database.open(join(dataDir, 'cloud.db'));
    try {
      const stored = JSON.stringify(await db.all('SELECT * FROM cloud_gateway_tokens'));
      expect(stored).not.toContain(token.slice(-43));
      const tokens = await GatewayTokens.open(db);
      expect(await tokens.verify(token)).toBe(id);
      const rotated = cli(config, 'rotate', id);
      expect(rotated.code).toBe(0);
      // Another process revoked it: a success is remembered for at most VERIFIED_TTL_MS.
      await new Promise((r) => setTimeout(r, VERIFIED_TTL_MS));
      const next = /cgw_[0-9a-f]{12}_[A-Za-z0-9_-]{43}/.exec(rotated.out)?.[0] as string;
      expect(await tokens.verify(token)).toBeUndefined();
      expect(await tokens.verify(next)).toBe(next.split('_')[1]);
      expect(cli(config, 'revoke', next.split('_')[1] as string).code).toBe(0);
      await new Promise((r) => setTimeout(r, VERIFIED_TTL_MS));
      expect(await tokens.verify(next)).toBeUndefined();
      expect(cli(config, 'revoke', 'nope')).toMatchObject({ code: 1, err: expect.stringMatching(/no valid token with id 'nope'/) });
      expect(cli(config, 'frobnicate').code).toBe(2);
    } finally {
      await db.close();
    }
  }, 120_000);

  it('npm run cloud-token names the database it wrote to, and warns while no cloud has started on it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cloud-cli-where-'));
    const config = join(dataDir, 'config.json');
    writeFileSync(config, JSON.stringify({ dataDir }));
    const before = cli(config, 'create', 'plant-a');
    expect(before.code).toBe(0);
    expect(before.err).toContain(`tokens written to ${join(dataDir, 'cloud.db')} (SQLite)`);
    expect(before.err).toMatch(/warning: no cloud has started on this database yet/);
    const cloud = await startTestCloud({ dataDir });
    await cloud.stop();
    const after = cli(config, 'list');
    expect(after.code).toBe(0);
    expect(after.err).toContain(`tokens read from ${join(dataDir, 'cloud.db')} (SQLite)`);
    expect(after.err).toContain(`last used by the cloud on ${hostname()}, started `);
    expect(after.err).not.toContain('warning');
    expect(after.out).toMatch(/plant-a {2}created .* {2}valid/);
  }, 120_000);

  it('GW-86 a token revoked or rotated in the cloud\'s own process fails its next check at once, though its success was remembered', async () => {
    const db = await Database.open(join(mkdtempSync(join(tmpdir(), 'cloud-verify-')), 'cloud.db'));
    try {
      await applyMigrations(db, BASE_SCHEMA_OWNER, CLOUD_MIGRATIONS);
      const tokens = await GatewayTokens.open(db);
      const a = await tokens.create('a');
      const b = await tokens.create('b');
      expect(await tokens.verify(a.token)).toBe(a.record.id);
      expect(await tokens.verify(b.token)).toBe(b.record.id);
      // A wrong secret under a remembered id is refused.
      expect(await tokens.verify(`${a.token.slice(0, -4)}AAAA`)).toBeUndefined();
      await tokens.revoke(a.record.id);
      expect(await tokens.verify(a.token)).toBeUndefined();
      const next = await tokens.rotate(b.record.id);
      expect(await tokens.verify(b.token)).toBeUndefined();
      expect(await tokens.verify(next?.token)).toBe(next?.record.id);
    } finally {
      await db.close();
    }
  });

  it('GW-87 a call that passes its deadline ends as a timeout at the deadline, and its late answer is dropped', async () => {
    const cloud = await startTestCloud();
    const { token, record } = await cloud.tokens.create('slow');
    const gw = await startTestGateway({ machines: [simMachine('S1')], cloudLink: { brokerUrl: cloud.brokerUrl, accessToken: token } });
    try {
      await untilOnline(cloud, record.id);
      // A deadline no broker round trip can meet.
      expect(await cloud.relay.call(record.id, { name: 'list_groups' }, 1, 'late-1')).toEqual({ ok: false, reason: 'timeout' });
      // The answer that comes later is dropped; the next call is answered normally.
      await new Promise((r) => setTimeout(r, 200));
      const next = await cloud.relay.call(record.id, { name: 'list_groups' }, 10_000, 'on-time-1');
      expect(next.ok).toBe(true);
    } finally {
      await gw.stop();
      await cloud.stop();
    }
  }, 60_000);
});
