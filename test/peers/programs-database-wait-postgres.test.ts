/**
 * A unit that survives a slow database: the program service and the cloud
 * started before their PostgreSQL server (a throwaway cluster made but not
 * yet running, test/fixtures/postgres.ts) wait for it, `/healthz` answering
 * and `/readyz` saying `database: unavailable` (the cloud: `token-database`)
 * with the reason, and start once it answers; the server halted under the
 * running program service makes its requests 503 with Retry-After, not 500,
 * logs the dead idle connections by message and code only, and answers again
 * once the server is back. The data directory of the service on PostgreSQL
 * is locked like one on SQLite: a restore into it is refused while it runs,
 * and its key files are backed up.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { backupDataDirectory } from '../../core/backup/backup.js';
import { cloudRole } from '../../core/roles/cloud/definition.js';
import { KEPT_FILES, parseConfig, ROLES } from '../../core/roles/index.js';
import { programsRole } from '../../core/roles/programs/definition.js';
import type { StartedRole } from '../../core/runtime/role.js';
import { makeCluster, type ControlledCluster } from '../fixtures/postgres.js';
import { TEST_PROGRAMS_ADMIN_PASSWORD } from '../fixtures/programs-accounts.js';
import { until, untilDefined } from '../fixtures/until.js';

const ROOT = resolve(import.meta.dirname, '../..');

type Line = { level: number; msg: string; probes?: string; failure?: Record<string, unknown> };

/** A logger whose lines the test reads. */
function capturing(): { logger: pino.Logger; lines: Line[]; text: () => string } {
  const raw: string[] = [];
  const lines: Line[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void (raw.push(line), lines.push(JSON.parse(line) as Line)) });
  return { logger, lines, text: () => raw.join('') };
}

const readyz = async (base: string) => {
  const res = await fetch(`${base}/readyz`);
  return { status: res.status, body: (await res.json()) as { checks: Record<string, string>; reasons?: Record<string, string> } };
};

describe('the program service and the cloud started before their PostgreSQL server', () => {
  let cluster: ControlledCluster;
  const password = () => decodeURIComponent(new URL(cluster.url()).password);
  const started: StartedRole[] = [];

  beforeAll(async () => {
    cluster = await makeCluster();
  }, 60_000);
  afterAll(async () => {
    for (const role of started) await role.stop.stop().catch(() => undefined);
    cluster?.remove();
  });

  it('wait with /healthz answering and /readyz saying why, then start on it once it answers; halted under the service, requests are 503 (not 500) and answer again once it is back', async () => {
    const programsDir = mkdtempSync(join(tmpdir(), 'pg-wait-programs-'));
    const programsEnv = { PROGRAMS_DATABASE_URL: cluster.url('programs'), PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD };
    const programsLog = capturing();
    const programsConfig = parseConfig({ logLevel: 'info', dataDir: programsDir, timeZone: 'UTC', programs: { host: '127.0.0.1', port: 0 } }, 'plant.json', programsEnv);
    const programs = programsRole.start({ config: programsConfig, file: 'plant.json', logger: programsLog.logger, env: programsEnv, offers: {}, definitions: ROLES });

    const cloudEnv = { CLOUD_DATABASE_URL: cluster.url('tokens') };
    const cloudLog = capturing();
    const cloudConfig = parseConfig({ logLevel: 'info', dataDir: mkdtempSync(join(tmpdir(), 'pg-wait-cloud-')), cloud: { host: '127.0.0.1', port: 0, mqttHost: '127.0.0.1', mqttPort: 0 } }, 'cloud.json', cloudEnv);
    const cloud = cloudRole.start({ config: cloudConfig, file: 'cloud.json', logger: cloudLog.logger, env: cloudEnv, offers: {}, definitions: ROLES });

    const programsProbes = (await untilDefined('the program service waiting', () => programsLog.lines.find((l) => l.probes)?.probes)).replace(/\/readyz$/, '');
    const cloudProbes = (await untilDefined('the cloud waiting', () => cloudLog.lines.find((l) => l.probes)?.probes)).replace(/\/readyz$/, '');
    for (const [base, check] of [[programsProbes, 'database'], [cloudProbes, 'token-database']] as const) {
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      const ready = await readyz(base);
      expect(ready.status).toBe(503);
      expect(ready.body.checks[check]).toBe('unavailable');
      expect(ready.body.reasons?.[check]).toBe('connection refused');
    }
    expect(existsSync(join(programsDir, 'programs.db.lock'))).toBe(true);

    // The server comes up; its databases a moment later (meanwhile: "database does not exist").
    await cluster.start();
    const admin = new pg.Client({ connectionString: cluster.url() });
    await admin.connect();
    await until('the reason to change', async () => (await readyz(programsProbes)).body.reasons?.database, (reason) => reason === 'database does not exist', 30_000);
    await admin.query("CREATE DATABASE programs TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'");
    await admin.query("CREATE DATABASE tokens TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'");
    await admin.end();
    started.push(await programs, await cloud);
    const base = (started[0]?.consoleUrl ?? '').replace(/\/$/, '');
    expect(base).toBe(programsProbes);
    expect((await readyz(base)).status).toBe(200);
    expect(programsLog.lines.some((l) => l.msg === 'the database answers; starting')).toBe(true);
    const login = await fetch(`${base}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: TEST_PROGRAMS_ADMIN_PASSWORD }) });
    expect(login.status).toBe(200);
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const libraries = () => fetch(`${base}/api/v1/libraries`, { headers: { cookie } });
    expect((await libraries()).status).toBe(200);

    // Several requests at once grow the pool past what the background rounds take, so that connections lie idle in it
    // when the server goes away under the running service.
    expect((await Promise.all(Array.from({ length: 6 }, libraries))).map((r) => r.status)).toEqual(Array.from({ length: 6 }, () => 200));
    await new Promise((r) => setTimeout(r, 200));
    await cluster.halt();
    const away = await libraries();
    expect([away.status, away.headers.get('retry-after'), away.headers.get('content-type')]).toEqual([503, '5', 'application/problem+json; charset=utf-8']);
    expect(await away.json()).toMatchObject({ type: expect.stringMatching(/service-unavailable$/), detail: expect.stringMatching(/cannot reach its database now \(.+\); retry in a moment/) });
    const notReady = await readyz(base);
    expect([notReady.status, notReady.body.checks.database]).toEqual([503, 'unavailable']);
    // An idle pooled connection that died is logged by its message and code, nothing of its client.
    const idle = await untilDefined('an idle connection failure in the log', () => programsLog.lines.find((l) => l.msg.startsWith('an idle PostgreSQL connection failed'))?.failure);
    expect(Object.keys(idle).every((k) => k === 'message' || k === 'code')).toBe(true);
    expect(programsLog.lines.filter((l) => l.level >= 50)).toEqual([]);
    for (const text of [programsLog.text(), cloudLog.text()]) {
      expect(text).not.toContain(password());
      expect(text).not.toMatch(/processID|secretKey|"user":"postgres"/);
    }

    await cluster.start();
    await until('requests answer again', async () => (await libraries()).status, (status) => status === 200, 30_000);
    expect((await readyz(base)).status).toBe(200);
  }, 120_000);

  it('the data directory of the running service on PostgreSQL is locked against a restore, and its key files are backed up', async () => {
    const dataDir = (started[0]?.banner ?? []).find((l) => l.trimStart().startsWith('data:'))?.replace(/^\s*data:\s*/, '') ?? '';
    expect(existsSync(join(dataDir, 'programs.db.lock'))).toBe(true);
    const out = join(mkdtempSync(join(tmpdir(), 'pg-wait-backup-')), 'b');
    const manifest = await backupDataDirectory(dataDir, out, KEPT_FILES);
    expect(manifest.files.map((f) => f.name)).toEqual(expect.arrayContaining(['credentials.key', 'metrics-token.sha256']));
    expect(manifest.files.some((f) => f.kind === 'database')).toBe(false);
    // From another process, as an operator runs it (within one process a lock is counted, not refused).
    const restore = spawnSync(process.execPath, ['--import', 'tsx', 'core/main.ts', 'restore', out, '--data-dir', dataDir], { cwd: ROOT, encoding: 'utf8' });
    expect(restore.status).toBe(1);
    expect(restore.stderr).toMatch(new RegExp(`^restore: programs\\.db in ${dataDir} is in use by process ${process.pid} \\(programs, since`));
  });
});
