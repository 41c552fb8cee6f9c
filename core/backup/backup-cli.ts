/**
 * The commands `backup` and `restore` of core/main.ts (core/runtime/commands.ts):
 * `npm run backup -- --out DIR [--data-dir D] [--config FILE]` and
 * `npm run restore -- DIR [--data-dir D] [--config FILE]` (core/backup/backup.ts;
 * docs/operations.md, "Backup and restore"), of what the build's parts
 * declare they keep (core/backup/kept-files.ts, given by core/main.ts). The data
 * directory is `--data-dir`, else the one `npm start` would use (the config
 * file and GATEWAY_DATA_DIR, read as `npm start` reads them). Backup runs
 * while the roles run, and names each role database that is on PostgreSQL
 * with the pg_dump command that backs it up; restore refuses while a role
 * runs. Exit codes: 0 done, 1 refused (the reason on stderr), 2 invalid
 * arguments or config.
 */
import { join, resolve } from 'node:path';
import type { GatewayConfig } from '../../config/schema.js';
import { BackupRefused, backupDataDirectory, restoreDataDirectory, type ManifestEntry } from './backup.js';
import type { Command, CommandIO } from '../runtime/commands.js';
import type { KeptPlan } from './kept-files.js';
import { DataLockError } from '../store/data-lock.js';
import { describePostgres } from '../store/postgres-database.js';

const USAGE = [
  'usage: npm run backup -- --out DIR [--data-dir DIR] [--config FILE]',
  '       npm run restore -- BACKUP_DIR [--data-dir DIR] [--config FILE]',
].join('\n');

interface Args {
  command: 'backup' | 'restore';
  out?: string;
  from?: string;
  dataDir?: string;
}

class UsageError extends Error {}

/** Reads the arguments; `--config` is left to the config loader. */
export function parseArgs(argv: readonly string[]): Args {
  const [command, ...rest] = argv;
  if (command !== 'backup' && command !== 'restore') throw new UsageError(`expected backup or restore, found ${JSON.stringify(command ?? '')}`);
  const args: Args = { command };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string;
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = () => {
      const v = inline ?? rest[++i];
      if (!v) throw new UsageError(`${flag}: expected a value after it`);
      return v;
    };
    if (flag === '--out' && command === 'backup') args.out = value();
    else if (flag === '--data-dir') args.dataDir = value();
    else if (flag === '--config') value();
    else if (!flag.startsWith('--') && command === 'restore' && args.from === undefined) args.from = flag;
    else throw new UsageError(`unknown argument ${JSON.stringify(arg)}; accepted: ${command === 'backup' ? '--out DIR' : 'BACKUP_DIR'}, --data-dir DIR, --config FILE`);
  }
  if (command === 'backup' && !args.out) throw new UsageError('--out: the directory to write the backup to is required');
  if (command === 'restore' && !args.from) throw new UsageError('BACKUP_DIR: the directory a backup wrote is required');
  return args;
}

const line = (f: ManifestEntry) => `  ${f.name.padEnd(24)} ${String(f.bytes).padStart(12)} bytes  sha256 ${f.sha256}`;

/** A role whose database is on PostgreSQL, not in the data directory. */
export interface SharedDatabase {
  role: string;
  /** The connection string (shown only as its server and database). */
  url: string;
}

/** What the commands back up: the build's declared files, and which roles are on PostgreSQL under a configuration. */
export interface BackupSources {
  kept: KeptPlan;
  sharedDatabases(config: GatewayConfig, env: NodeJS.ProcessEnv): readonly SharedDatabase[];
}

/** The lines that say how to back up the roles' databases on PostgreSQL, which a copy of the data directory does not hold. */
export function pgDumpLines(shared: readonly SharedDatabase[], out: string): string[] {
  return shared.flatMap(({ role, url }) => [
    `the ${role} role's database is on PostgreSQL (${describePostgres(url)}), not in the data directory: back it up with PostgreSQL's pg_dump beside this backup, e.g.`,
    `  pg_dump --format=custom --file=${join(out, `${role}.pgdump`)} --dbname='${describePostgres(url)}'`,
    '  (with the user and password of the connection string: PGUSER and PGPASSWORD, or ~/.pgpass; restore it with pg_restore --clean --if-exists)',
  ]);
}

/** The data directory (`--data-dir`, else the configuration's) and the roles on PostgreSQL under the configuration; 2 when the configuration is wrong. */
function whereFrom(args: Args, io: CommandIO, sources: BackupSources): { dataDir: string; shared: readonly SharedDatabase[] } | 2 {
  // A restore with --data-dir needs nothing of the configuration; a backup reads it for the roles on PostgreSQL.
  if (args.command === 'restore' && args.dataDir !== undefined) return { dataDir: resolve(args.dataDir), shared: [] };
  const loaded = io.loadConfig();
  if (loaded === 2) return 2;
  return { dataDir: resolve(args.dataDir ?? loaded.config.dataDir), shared: sources.sharedDatabases(loaded.config, io.env) };
}

async function backup(args: Args, dataDir: string, shared: readonly SharedDatabase[], kept: KeptPlan, progress: (text: string) => void): Promise<void> {
  const out = resolve(args.out as string);
  progress(`backup of ${dataDir} into ${out}`);
  const started = Date.now();
  const manifest = await backupDataDirectory(dataDir, out, kept, progress);
  progress(`wrote ${manifest.files.length} files in ${((Date.now() - started) / 1000).toFixed(1)} s (manifest.json lists them):`);
  for (const f of manifest.files) progress(line(f));
  progress('keep it as secret as the data directory: it holds the keys that unseal the stored credentials.');
  for (const text of pgDumpLines(shared, out)) progress(text);
}

/** Runs `backup` or `restore` with the arguments after the command's name. */
async function run(command: Args['command'], argv: readonly string[], io: CommandIO, sources: BackupSources): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let args: Args;
  try {
    args = parseArgs([command, ...argv]);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr.write(`${err.message}\n${USAGE}\n`);
    return 2;
  }
  const where = whereFrom(args, io, sources);
  if (where === 2) return 2;
  const { dataDir, shared } = where;
  const progress = (text: string) => void io.stdout.write(`${text}\n`);
  try {
    if (args.command === 'backup') {
      await backup(args, dataDir, shared, sources.kept, progress);
    } else {
      progress(`restore of ${resolve(args.from as string)} into ${dataDir}`);
      const { manifest, setAside } = await restoreDataDirectory(args.from as string, dataDir, sources.kept, progress);
      for (const f of manifest.files) progress(line(f));
      progress(setAside ? `the files it replaced are in ${setAside}` : 'the data directory held none of these files');
      progress('start the roles now.');
    }
    return 0;
  } catch (err) {
    if (err instanceof BackupRefused || err instanceof DataLockError) {
      io.stderr.write(`${args.command}: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

/** The runtime's own commands: a backup of the data directory every role shares, and its restore, of what `sources` declare. */
export function backupCommands(sources: BackupSources): readonly Command[] {
  return [
    { name: 'backup', usage: USAGE.split('\n')[0] as string, run: (argv, io) => run('backup', argv, io, sources) },
    { name: 'restore', usage: (USAGE.split('\n')[1] as string).replace(/^ +/, 'usage: '), run: (argv, io) => run('restore', argv, io, sources) },
  ];
}
