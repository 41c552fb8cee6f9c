/**
 * Which process uses a role's database in a data directory: a lock file
 * `<database>.lock` beside it (e.g. `gateway.db.lock`), holding the pid, what
 * holds it and since when, made with O_EXCL so two processes cannot both
 * take it. RoleRuntime takes its database's lock when it opens and releases
 * it after the database closed; a restore takes every role's, so it refuses
 * while a role runs and no role starts while it restores.
 *
 * A lock whose pid is gone is stale (a killed process, a power cut) and is
 * taken over. So is one naming this process's own pid that this process
 * does not hold (a container whose process is always pid 1, restarted).
 * Within one process a lock is counted, not refused: tests and `npm start`
 * may open a role's runtime again on the same directory. A lock naming a
 * live pid on another machine sharing the directory, or a pid reused after
 * a reboot, cannot be told from a running role: the refusal names the file
 * to delete once no role runs. docs/operations.md, "Backup and restore".
 */
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FILE_MODE } from './data-directory.js';

export const LOCK_SUFFIX = '.lock';

/** What a lock file says. */
export interface LockHolder {
  pid: number;
  /** What holds it: `gateway`, `programs`, `cloud`, `restore`. */
  holder: string;
  since: string;
}

/** A lock held by another live process; the message names it and the file. */
export class DataLockError extends Error {
  constructor(
    message: string,
    readonly holder: LockHolder,
    readonly file: string,
  ) {
    super(message);
    this.name = 'DataLockError';
  }
}

/** Locks this process holds, by file, with their count. */
const held = new Map<string, number>();

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readHolder(file: string): LockHolder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockHolder>;
    return Number.isInteger(parsed.pid) && (parsed.pid as number) > 0 ? { pid: parsed.pid as number, holder: String(parsed.holder ?? 'unknown'), since: String(parsed.since ?? '') } : undefined;
  } catch {
    return undefined;
  }
}

export class DataLock {
  private released = false;

  private constructor(readonly file: string) {}

  /** Takes the lock of `database` in `dataDir` for `holder`; throws a DataLockError while another live process holds it. */
  static acquire(dataDir: string, database: string, holder: string): DataLock {
    const file = join(dataDir, `${database}${LOCK_SUFFIX}`);
    const count = held.get(file);
    if (count !== undefined) {
      held.set(file, count + 1);
      return new DataLock(file);
    }
    const content = `${JSON.stringify({ pid: process.pid, holder, since: new Date().toISOString() } satisfies LockHolder)}\n`;
    for (let attempt = 0; ; attempt++) {
      try {
        writeFileSync(file, content, { flag: 'wx', mode: FILE_MODE });
        held.set(file, 1);
        return new DataLock(file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
      }
      const other = readHolder(file);
      if (other && other.pid !== process.pid && isAlive(other.pid)) {
        throw new DataLockError(
          `${database} in ${dataDir} is in use by process ${other.pid} (${other.holder}, since ${other.since}); stop it first. ` +
            `If no such process runs on this machine (the directory is shared, or the pid was reused), delete ${file}`,
          other,
          file,
        );
      }
      // Stale: its process is gone (or it was this pid in an earlier life). Taken over with O_EXCL again.
      try {
        unlinkSync(file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
  }

  /** Gives the lock back (the file goes when this process's last holder releases it); safe to call twice. */
  release(): void {
    if (this.released) return;
    this.released = true;
    const count = held.get(this.file) ?? 0;
    if (count > 1) {
      held.set(this.file, count - 1);
      return;
    }
    held.delete(this.file);
    try {
      unlinkSync(this.file);
    } catch {
      // Already gone (the directory was removed).
    }
  }
}
