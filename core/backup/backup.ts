/**
 * Online backup and restore of a data directory (docs/operations.md,
 * "Backup and restore"), of what the build's parts declare they keep there
 * (core/backup/kept-files.ts: each role's database and files, each plugin's and
 * driver's, the runtime's); this file names none of them.
 *
 * Backup copies each declared database found in the data directory with
 * SQLite's online backup API (node sqlite3's `Database#backup`), in steps
 * of BACKUP_STEP_PAGES pages with progress, inside one read transaction on
 * its own connection: in WAL mode the roles go on writing meanwhile, and the
 * copy is the database as of the moment that transaction began (without it,
 * every write between two steps would restart the copy). Each copy is
 * checked (`PRAGMA quick_check`). The declared files and directories are
 * copied as they are: sealed secrets stay sealed, and the backup must be kept
 * as secret as the data directory (it is written 0700/0600). A manifest lists
 * every file with its size and SHA-256. A directory whose roles keep their
 * databases on PostgreSQL holds only the key files: they are backed up, and
 * the database is PostgreSQL's to dump (backup-cli.ts says how).
 *
 * Restore checks every file against the manifest, takes the lock of every
 * declared database in the data directory (a role holds its lock on any
 * engine, so restore refuses while one runs, and no role starts meanwhile),
 * moves the files it replaces (with their -wal and -shm) into
 * `before-restore-<time>/`, and copies the backup in.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, createReadStream, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import sqlite3 from 'sqlite3';
import { isKeptPath, type KeptPlan } from './kept-files.js';
import { DIRECTORY_MODE, FILE_MODE, prepareDataDirectory, restrictDataDirectory } from '../store/data-directory.js';
import { DataLock } from '../store/data-lock.js';

export const MANIFEST_FILE = 'manifest.json';
export const MANIFEST_FORMAT = 1;
/** Pages copied per step of the online backup (4 KiB pages: 4 MiB a step). */
export const BACKUP_STEP_PAGES = 1024;

export interface ManifestEntry {
  /** Path relative to the data directory, `/`-separated. */
  name: string;
  kind: 'database' | 'key';
  bytes: number;
  sha256: string;
}

export interface Manifest {
  format: number;
  createdAt: string;
  dataDir: string;
  files: ManifestEntry[];
}

/** A backup or restore that cannot be done as asked; the message says why and what to do. */
export class BackupRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupRefused';
  }
}

/** Progress lines for the operator. */
export type Progress = (line: string) => void;

export async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function call(run: (done: (err: Error | null) => void) => void): Promise<void> {
  return new Promise((res, rej) => run((err) => (err ? rej(err) : res())));
}

interface SqliteBackup {
  step(pages: number, done: (err: Error | null) => void): void;
  finish(done: (err: Error | null) => void): void;
  readonly completed: boolean;
  readonly failed: boolean;
  readonly remaining: number;
  readonly pageCount: number;
}

/** Copies one live database to `target` (which must not exist) as of one moment; reports progress. */
export async function backupDatabase(source: string, target: string, progress: Progress, label = source): Promise<void> {
  const src = await new Promise<sqlite3.Database>((res, rej) => {
    // Read-write without create: a stopped WAL database has no -shm, which a read-only connection could not make. It only reads.
    const db = new sqlite3.Database(source, sqlite3.OPEN_READWRITE, (err) => (err ? rej(err) : res(db)));
  });
  try {
    await call((done) => src.exec('PRAGMA busy_timeout=10000; BEGIN; SELECT count(*) FROM sqlite_master;', done));
    const backup = (src as unknown as { backup(file: string, destName: string, srcName: string, filenameIsDest: boolean, done: (err: Error | null) => void): SqliteBackup })
      .backup(target, 'main', 'main', true, () => undefined);
    let lastShown = -1;
    while (!backup.completed) {
      await call((done) => backup.step(BACKUP_STEP_PAGES, done));
      if (backup.failed) throw new Error(`${label}: the online backup failed`);
      const percent = backup.pageCount ? Math.floor(((backup.pageCount - backup.remaining) / backup.pageCount) * 100) : 100;
      if (percent >= lastShown + 10 || backup.completed) {
        progress(`  ${label}: ${percent} % (${backup.pageCount - backup.remaining} of ${backup.pageCount} pages)`);
        lastShown = percent;
      }
    }
    await call((done) => backup.finish(done));
  } finally {
    await call((done) => src.exec('COMMIT', done)).catch(() => undefined);
    await call((done) => src.close(done));
  }
  const copy = await new Promise<sqlite3.Database>((res, rej) => {
    const db = new sqlite3.Database(target, sqlite3.OPEN_READWRITE, (err) => (err ? rej(err) : res(db)));
  });
  try {
    const check = await new Promise<string>((res, rej) => copy.get('PRAGMA quick_check', (err: Error | null, row: { quick_check: string }) => (err ? rej(err) : res(row.quick_check))));
    if (check !== 'ok') throw new Error(`${label}: the copy fails SQLite's quick_check: ${check}`);
    // A copy that needs no -wal beside it: one file to keep, hash and restore.
    await call((done) => copy.exec('PRAGMA journal_mode=DELETE', done));
  } finally {
    await call((done) => copy.close(done));
  }
}

/** The declared files and every file below the declared directories that `dataDir` holds, `/`-separated. */
function keptFilesIn(dataDir: string, kept: KeptPlan): string[] {
  const found: string[] = kept.files.filter((name) => existsSync(join(dataDir, name)) && statSync(join(dataDir, name)).isFile());
  const walk = (relative: string): void => {
    for (const entry of readdirSync(join(dataDir, relative), { withFileTypes: true })) {
      const path = `${relative}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) found.push(path);
    }
  };
  for (const dir of kept.directories) if (existsSync(join(dataDir, dir)) && statSync(join(dataDir, dir)).isDirectory()) walk(dir);
  return found;
}

/** Refuses an `--out` that is a file or a directory with something in it. */
function checkOut(outDir: string): void {
  if (!existsSync(outDir)) return;
  if (!statSync(outDir).isDirectory()) throw new BackupRefused(`--out ${outDir} is a file, not a directory; give a new directory for each backup`);
  if (readdirSync(outDir).length) throw new BackupRefused(`--out ${outDir} is not empty; give a new directory for each backup`);
}

/**
 * Backs up what `kept` declares of `dataDir` into `outDir` (new or empty):
 * the databases found there and the key files; returns the manifest written.
 * A directory with neither is refused.
 */
export async function backupDataDirectory(dataDirIn: string, outDirIn: string, kept: KeptPlan, progress: Progress = () => undefined, now: () => Date = () => new Date()): Promise<Manifest> {
  const dataDir = resolve(dataDirIn);
  const outDir = resolve(outDirIn);
  if (!existsSync(dataDir)) throw new BackupRefused(`no data directory at ${dataDir}; pass --data-dir or the --config the roles run with`);
  const databases = kept.databases.filter((name) => existsSync(join(dataDir, name)));
  const keys = keptFilesIn(dataDir, kept);
  if (!databases.length && !keys.length) {
    throw new BackupRefused(`nothing to back up in ${dataDir}: no role database (${kept.databases.join(', ')}) and no key file (${kept.files.join(', ')}); pass --data-dir or the --config the roles run with`);
  }
  checkOut(outDir);
  mkdirSync(outDir, { recursive: true, mode: DIRECTORY_MODE });
  const files: ManifestEntry[] = [];
  for (const name of databases) {
    const target = join(outDir, name);
    mkdirSync(dirname(target), { recursive: true, mode: DIRECTORY_MODE });
    await backupDatabase(join(dataDir, name), target, progress, name);
    files.push({ name, kind: 'database', bytes: statSync(target).size, sha256: await sha256Of(target) });
  }
  for (const name of keys) {
    const target = join(outDir, name);
    mkdirSync(dirname(target), { recursive: true, mode: DIRECTORY_MODE });
    copyFileSync(join(dataDir, name), target);
    files.push({ name, kind: 'key', bytes: statSync(target).size, sha256: await sha256Of(target) });
  }
  const manifest: Manifest = { format: MANIFEST_FORMAT, createdAt: now().toISOString(), dataDir, files };
  writeFileSync(join(outDir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`, { mode: FILE_MODE });
  restrictDataDirectory(outDir);
  return manifest;
}

/** Reads and checks the manifest of `backupDir` and every file it lists (size and SHA-256). */
export async function verifyBackup(backupDir: string): Promise<Manifest> {
  const file = join(backupDir, MANIFEST_FILE);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(file, 'utf8')) as Manifest;
  } catch {
    throw new BackupRefused(`${file}: no readable manifest; give the directory a backup wrote`);
  }
  if (manifest.format !== MANIFEST_FORMAT || !Array.isArray(manifest.files)) throw new BackupRefused(`${file}: manifest format ${String(manifest.format)}; this version restores format ${MANIFEST_FORMAT}`);
  for (const entry of manifest.files) {
    if (typeof entry.name !== 'string' || !isKeptPath(entry.name)) throw new BackupRefused(`${file}: file name ${JSON.stringify(entry.name)} is not a path inside the data directory`);
    const path = join(backupDir, entry.name);
    if (!existsSync(path)) throw new BackupRefused(`${path}: listed in the manifest but missing`);
    const bytes = statSync(path).size;
    if (bytes !== entry.bytes || (await sha256Of(path)) !== entry.sha256) throw new BackupRefused(`${path}: differs from the manifest (size or SHA-256); the backup is damaged`);
  }
  return manifest;
}

/**
 * Restores `backupDir` into `dataDir`: refuses (BackupRefused, DataLockError)
 * while a role runs on it (the lock of each database `kept` declares);
 * keeps the files it replaces in `before-restore-<time>/`. Returns the
 * manifest and where the old files went.
 */
export async function restoreDataDirectory(
  backupDirIn: string,
  dataDirIn: string,
  kept: KeptPlan,
  progress: Progress = () => undefined,
  now: () => Date = () => new Date(),
): Promise<{ manifest: Manifest; setAside: string | undefined }> {
  const backupDir = resolve(backupDirIn);
  const dataDir = resolve(dataDirIn);
  const manifest = await verifyBackup(backupDir);
  progress(`  checked ${manifest.files.length} files against ${MANIFEST_FILE}`);
  prepareDataDirectory(dataDir);
  const locks: DataLock[] = [];
  try {
    for (const name of kept.databases) locks.push(DataLock.acquire(dataDir, name, 'restore'));
    const aside = join(dataDir, `before-restore-${now().toISOString().replace(/[:.]/g, '-')}`);
    let setAside: string | undefined;
    const replaced = manifest.files.flatMap((f) => (f.kind === 'database' ? [f.name, `${f.name}-wal`, `${f.name}-shm`, `${f.name}-journal`] : [f.name]));
    for (const name of replaced) {
      if (!existsSync(join(dataDir, name))) continue;
      mkdirSync(dirname(join(aside, name)), { recursive: true, mode: DIRECTORY_MODE });
      renameSync(join(dataDir, name), join(aside, name));
      setAside = aside;
    }
    for (const entry of manifest.files) {
      mkdirSync(dirname(join(dataDir, entry.name)), { recursive: true, mode: DIRECTORY_MODE });
      copyFileSync(join(backupDir, entry.name), join(dataDir, entry.name));
      progress(`  restored ${entry.name} (${entry.bytes} bytes)`);
    }
    restrictDataDirectory(dataDir);
    return { manifest, setAside };
  } finally {
    for (const lock of locks) lock.release();
  }
}
