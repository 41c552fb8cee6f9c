/**
 * Online backup and restore (core/backup/backup.ts, core/backup/backup-cli.ts) and the
 * data-directory lock (core/store/data-lock.ts): a backup taken while a role
 * writes is the database as of one moment (every transaction whole, the
 * sequence without a gap), with its key files and a manifest of sizes and
 * SHA-256; restore refuses while a role runs on the directory, in this
 * process's API and on the command line, and restores once it stopped.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { backupDataDirectory, restoreDataDirectory, sha256Of, verifyBackup, BackupRefused } from '../../core/backup/backup.js';
import { keptPlan } from '../../core/backup/kept-files.js';
import { definePlugin } from '../../core/runtime/plugin-host.js';
import { defineRole, keptFilesOf } from '../../core/runtime/role.js';
import { KEPT_FILES, ROLES } from '../../core/roles/index.js';
import { RoleRuntime } from '../../core/runtime/runtime.js';
import { CredentialBox } from '../../core/store/credential-box.js';
import { Database } from '../../core/store/database.js';
import { DataLockError } from '../../core/store/data-lock.js';

const ROOT = resolve(import.meta.dirname, '../..');
const logger = pino({ level: 'silent' });
const fresh = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));
const toClose: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (toClose.length) await (toClose.pop() as () => Promise<void>)();
});

const ROWS_TABLE = { id: 1, name: 'rows', up: ['CREATE TABLE rows (seq INTEGER PRIMARY KEY, batch INTEGER NOT NULL, payload BLOB NOT NULL)'] };
const BATCH = 10;

async function openGatewayDb(dataDir: string): Promise<RoleRuntime> {
  const runtime = await RoleRuntime.open({ role: 'gateway', dataDir, databaseFile: 'gateway.db', logger, now: Date.now, baseMigrations: [ROWS_TABLE] });
  toClose.push(() => runtime.stop());
  return runtime;
}

/** Writes batches of BATCH rows, each batch one transaction, until stopped. */
function keepWriting(db: Database): { stop: () => Promise<number> } {
  let going = true;
  let batches = 0;
  const loop = (async () => {
    while (going) {
      const batch = ++batches;
      await db.write(async (tx) => {
        for (let i = 0; i < BATCH; i++) await tx.run('INSERT INTO rows (batch, payload) VALUES (?, randomblob(200))', [batch]);
      }, { transaction: true });
    }
  })();
  return { stop: async () => { going = false; await loop; return batches; } };
}

/** A role runtime held open by another process on `dataDir`. */
async function holdInAnotherProcess(dataDir: string, database = 'gateway.db'): Promise<{ child: ChildProcess; pid: number; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/hold-role.ts', dataDir, database], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const opened = new Promise<number>((res, rej) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /open (\d+)/.exec(out);
      if (match) res(Number(match[1]));
    });
    child.on('exit', (code) => rej(new Error(`the holding process exited (${code}) before it opened: ${out}`)));
  });
  const exited = new Promise<void>((res) => child.on('exit', () => res()));
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  };
  toClose.push(stop);
  return { child, pid: await opened, stop };
}

/** The command line as an operator runs it; a spawned tsx start takes seconds on a busy machine, hence the longer timeouts below. */
const cli = (args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'core/main.ts', ...args], { cwd: ROOT, encoding: 'utf8' });

describe('backup', () => {
  it('a backup taken while a role writes holds every transaction whole and the sequence without a gap, with its key files and a manifest', async () => {
    const dataDir = fresh('backup-data-');
    const runtime = await openGatewayDb(dataDir);
    CredentialBox.open(dataDir);
    // About 2,500 pages, so the copy takes several steps while the writes go on.
    await runtime.db.write(async (tx) => {
      await tx.run('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 40000) INSERT INTO rows (batch, payload) SELECT (x + 9) / 10, randomblob(200) FROM c');
    }, { transaction: true });
    const before = Number((await runtime.db.get<{ n: number }>('SELECT count(*) AS n FROM rows'))?.n);
    const writer = keepWriting(runtime.db);
    const lines: string[] = [];
    const out = join(fresh('backup-out-'), 'b1');
    const manifest = await backupDataDirectory(dataDir, out, KEPT_FILES, (line) => lines.push(line));
    await writer.stop();
    const after = Number((await runtime.db.get<{ n: number }>('SELECT count(*) AS n FROM rows'))?.n);

    expect(manifest.files.map((f) => [f.name, f.kind])).toEqual([['gateway.db', 'database'], ['credentials.key', 'key'], ['metrics-token.sha256', 'key']]);
    for (const file of manifest.files) {
      expect(statSync(join(out, file.name)).size).toBe(file.bytes);
      expect(await sha256Of(join(out, file.name))).toBe(file.sha256);
      expect(statSync(join(out, file.name)).mode & 0o777).toBe(0o600);
    }
    expect(readFileSync(join(out, 'credentials.key'))).toEqual(readFileSync(join(dataDir, 'credentials.key')));
    expect(JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'))).toEqual(manifest);
    expect(lines.at(-1)).toMatch(/^ {2}gateway\.db: 100 % \(\d+ of \d+ pages\)$/);
    expect(lines.length).toBeGreaterThan(1);

    // Opened only now: opening makes it a WAL database again, which changes its bytes.
    const check = await Database.open(join(out, 'gateway.db'));
    toClose.push(() => check.close());
    const { n, max, batches } = (await check.get<{ n: number; max: number; batches: number }>('SELECT count(*) AS n, max(seq) AS max, count(DISTINCT batch) AS batches FROM rows')) as { n: number; max: number; batches: number };
    expect(n).toBeGreaterThanOrEqual(before);
    expect(n).toBeLessThan(after);
    expect(max).toBe(n);
    expect(n % BATCH).toBe(0);
    expect(batches * BATCH).toBe(n);
    expect((await check.get<{ quick_check: string }>('PRAGMA quick_check'))?.quick_check).toBe('ok');

  });

  it('refuses a directory without a role database or key file and an --out that is not empty, saying what to pass', async () => {
    const empty = fresh('backup-none-');
    await expect(backupDataDirectory(empty, join(empty, 'out'), KEPT_FILES)).rejects.toThrow(
      `nothing to back up in ${empty}: no role database (gateway.db, programs.db, cloud.db) and no key file (credentials.key, jwt-signing.key, gateway-id, cloud-link.json, metrics-token.sha256)`,
    );
    const dataDir = fresh('backup-data-');
    await (await openGatewayDb(dataDir)).stop();
    const out = fresh('backup-out-');
    writeFileSync(join(out, 'something'), 'x');
    await expect(backupDataDirectory(dataDir, out, KEPT_FILES)).rejects.toThrow(new BackupRefused(`--out ${out} is not empty; give a new directory for each backup`));
  });
});

describe('backup of what the roles declare', { timeout: 90_000 }, () => {
  /** A role this build does not have, with a plugin: each declares what it keeps. */
  const testRole = defineRole({
    name: 'test-role', databaseFile: 'test-role.db', startsByDefault: false, stopRank: 40, config: [], commands: [],
    keeps: { files: ['test-role.key'], directories: ['test-role/certs'] },
    plugins: [definePlugin<object>({ name: 'test-plugin', keeps: { files: ['test-plugin.json'] }, register: () => undefined })],
    start: () => Promise.reject(new Error('not started in this test')),
  });
  const kept = keptFilesOf([...ROLES, testRole]);

  it("a role added to the build has its database, key file, directory and its plugin's file in the backup and the restore, and restore takes its database's lock", async () => {
    const dataDir = fresh('backup-role-');
    const runtime = await RoleRuntime.open({ role: 'test-role', dataDir, databaseFile: 'test-role.db', logger, now: Date.now, baseMigrations: [ROWS_TABLE] });
    await runtime.db.write((tx) => tx.run("INSERT INTO rows (batch, payload) VALUES (7, x'0102')"));
    writeFileSync(join(dataDir, 'test-role.key'), 'role key\n');
    writeFileSync(join(dataDir, 'test-plugin.json'), '{"plugin":true}\n');
    mkdirSync(join(dataDir, 'test-role', 'certs', 'trusted'), { recursive: true });
    writeFileSync(join(dataDir, 'test-role', 'certs', 'trusted', 'Machine 7[ab12].der'), 'cert');
    writeFileSync(join(dataDir, 'not-declared.txt'), 'left out');
    const out = join(fresh('backup-role-out-'), 'b');
    const manifest = await backupDataDirectory(dataDir, out, kept);
    await runtime.stop();
    expect(manifest.files.map((f) => [f.name, f.kind])).toEqual([
      ['test-role.db', 'database'], ['test-role.key', 'key'], ['test-plugin.json', 'key'], ['metrics-token.sha256', 'key'], ['test-role/certs/trusted/Machine 7[ab12].der', 'key'],
    ]);
    // Without the role in the build, none of its files would be copied.
    expect(keptFilesOf(ROLES).databases).not.toContain('test-role.db');

    const target = fresh('backup-role-target-');
    const holder = await holdInAnotherProcess(target, 'test-role.db');
    await expect(restoreDataDirectory(out, target, kept)).rejects.toThrow(new RegExp(`^test-role\\.db in ${target} is in use by process ${holder.pid}`));
    await holder.stop();
    await restoreDataDirectory(out, target, kept);
    for (const name of ['test-role.key', 'test-plugin.json', 'test-role/certs/trusted/Machine 7[ab12].der']) expect(readFileSync(join(target, name))).toEqual(readFileSync(join(dataDir, name)));
    expect(existsSync(join(target, 'not-declared.txt'))).toBe(false);
    const restored = await RoleRuntime.open({ role: 'test-role', dataDir: target, databaseFile: 'test-role.db', logger, now: Date.now, baseMigrations: [ROWS_TABLE] });
    toClose.push(() => restored.stop());
    expect(await restored.db.get('SELECT batch FROM rows')).toEqual({ batch: 7 });
  });

  it('a declared path outside the data directory, or declared as two kinds, is refused naming the parts', () => {
    expect(() => keptPlan([{ owner: "plugin 'x'", keeps: { files: ['../etc/passwd'] } }])).toThrow("plugin 'x' keeps '../etc/passwd', which is not a relative path inside the data directory");
    expect(() => keptPlan([{ owner: "role 'a'", keeps: { databases: ['a.db'] } }, { owner: "plugin 'b'", keeps: { files: ['a.db'] } }])).toThrow("'a.db' is kept as databases by role 'a' and as files by plugin 'b'");
  });

  it('a data directory whose roles keep their databases on PostgreSQL: its key files are backed up, and the command names the pg_dump that backs up each database, without credentials', async () => {
    const dataDir = fresh('backup-pg-');
    CredentialBox.open(dataDir);
    writeFileSync(join(dataDir, 'metrics-token.sha256'), 'hash\n');
    const manifest = await backupDataDirectory(dataDir, join(fresh('backup-pg-out-'), 'b'), KEPT_FILES);
    expect(manifest.files.map((f) => [f.name, f.kind])).toEqual([['credentials.key', 'key'], ['metrics-token.sha256', 'key']]);

    const config = join(fresh('backup-pg-cfg-'), 'config.json');
    writeFileSync(config, JSON.stringify({ dataDir, programs: { databaseUrl: 'postgresql://programs:pg-s3cret@db.plant:5432/programs' } }));
    const out = join(fresh('backup-pg-cli-'), 'b');
    const done = cli(['backup', '--out', out, '--config', config]);
    expect(done.stderr).toBe('');
    expect(done.status).toBe(0);
    expect(done.stdout).toContain("the programs role's database is on PostgreSQL (postgresql://db.plant:5432/programs), not in the data directory");
    expect(done.stdout).toContain(`  pg_dump --format=custom --file=${join(out, 'programs.pgdump')} --dbname='postgresql://db.plant:5432/programs'`);
    expect(done.stdout).not.toContain('pg-s3cret');
    expect((await verifyBackup(out)).files.map((f) => f.name)).toEqual(['credentials.key', 'metrics-token.sha256']);
  });

  it('an --out that is an existing file is refused cleanly, in the API and on the command line (exit 1, one line, no stack trace)', async () => {
    const dataDir = fresh('backup-outfile-');
    await (await openGatewayDb(dataDir)).stop();
    const file = join(fresh('backup-outfile-out-'), 'backup.tar');
    writeFileSync(file, 'not a directory');
    await expect(backupDataDirectory(dataDir, file, KEPT_FILES)).rejects.toThrow(new BackupRefused(`--out ${file} is a file, not a directory; give a new directory for each backup`));
    const done = cli(['backup', '--out', file, '--data-dir', dataDir]);
    expect(done.status).toBe(1);
    expect(done.stderr).toBe(`backup: --out ${file} is a file, not a directory; give a new directory for each backup\n`);
    expect(readFileSync(file, 'utf8')).toBe('not a directory');
  });
});

describe('restore', { timeout: 90_000 }, () => {
  it('refuses while a role runs on the data directory, in another process; restores once it stopped, keeping the files it replaced', async () => {
    const source = fresh('restore-src-');
    const runtime = await openGatewayDb(source);
    await runtime.db.write((tx) => tx.run('INSERT INTO rows (batch, payload) VALUES (1, x\'00\')'));
    const out = join(fresh('restore-out-'), 'b');
    await backupDataDirectory(source, out, KEPT_FILES);

    const target = fresh('restore-target-');
    const holder = await holdInAnotherProcess(target);
    const message = new RegExp(`^gateway\\.db in ${target} is in use by process ${holder.pid} \\(gateway, since [^)]+\\); stop it first`);
    await expect(restoreDataDirectory(out, target, KEPT_FILES)).rejects.toThrow(message);
    await expect(restoreDataDirectory(out, target, KEPT_FILES)).rejects.toBeInstanceOf(DataLockError);
    // A second gateway on the same directory is refused the same way.
    await expect(RoleRuntime.open({ role: 'gateway', dataDir: target, databaseFile: 'gateway.db', logger, now: Date.now })).rejects.toThrow(message);
    const refused = cli(['restore', out, '--data-dir', target]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(new RegExp(`^restore: gateway\\.db in ${target} is in use by process ${holder.pid}`));

    await holder.stop();
    const { setAside } = await restoreDataDirectory(out, target, KEPT_FILES);
    expect(setAside).toMatch(/before-restore-/);
    expect(existsSync(join(setAside as string, 'gateway.db'))).toBe(true);
    const restored = await openGatewayDb(target);
    expect(await restored.db.get('SELECT count(*) AS n FROM rows')).toEqual({ n: 1 });
  });

  it('refuses a backup whose file differs from its manifest, naming the file', async () => {
    const source = fresh('restore-src-');
    await (await openGatewayDb(source)).stop();
    const out = join(fresh('restore-out-'), 'b');
    await backupDataDirectory(source, out, KEPT_FILES);
    writeFileSync(join(out, 'metrics-token.sha256'), 'changed\n');
    await expect(verifyBackup(out)).rejects.toThrow(`${join(out, 'metrics-token.sha256')}: differs from the manifest (size or SHA-256); the backup is damaged`);
  });

  it('a lock left by a process that is gone is taken over', async () => {
    const dataDir = fresh('stale-lock-');
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(join(dataDir, 'gateway.db.lock'), JSON.stringify({ pid: Number(gone.stdout), holder: 'gateway', since: '2026-01-01T00:00:00.000Z' }));
    const runtime = await openGatewayDb(dataDir);
    expect(JSON.parse(readFileSync(join(dataDir, 'gateway.db.lock'), 'utf8')).pid).toBe(process.pid);
    await runtime.stop();
    expect(existsSync(join(dataDir, 'gateway.db.lock'))).toBe(false);
  });
});

describe('npm run backup', { timeout: 90_000 }, () => {
  it('backs up a data directory, printing each file with its size and SHA-256', async () => {
    const dataDir = fresh('cli-data-');
    await (await openGatewayDb(dataDir)).stop();
    const out = join(fresh('cli-out-'), 'b');
    const done = cli(['backup', '--out', out, '--data-dir', dataDir]);
    expect(done.stderr).toBe('');
    expect(done.status).toBe(0);
    const manifest = await verifyBackup(out);
    for (const f of manifest.files) expect(done.stdout).toContain(`${f.bytes} bytes  sha256 ${f.sha256}`);
    const bad = cli(['backup', '--data-dir', dataDir]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--out: the directory to write the backup to is required');
  });

  it('without --data-dir, backs up the data directory of the config file, read with every section as npm start reads it', async () => {
    const dataDir = fresh('cli-cfg-data-');
    await (await openGatewayDb(dataDir)).stop();
    const config = join(fresh('cli-cfg-'), 'config.json');
    writeFileSync(config, JSON.stringify({ gateway: { name: 'plant-7', dataDir }, communication: { port: 8081 }, machines: [] }));
    const out = join(fresh('cli-cfg-out-'), 'b');
    const done = cli(['backup', '--out', out, '--config', config]);
    expect(done.status).toBe(0);
    expect(done.stdout).toContain(`backup of ${dataDir} into ${out}`);
    // The old spelling gateway.dataDir is still read, with its deprecation line.
    expect(done.stderr).toContain('gateway.dataDir is the old spelling of dataDir');
    await verifyBackup(out);
  });
});
