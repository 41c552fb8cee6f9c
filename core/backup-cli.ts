/**
 * The commands `backup` and `restore` of core/main.ts (core/commands.ts):
 * `npm run backup -- --out DIR [--data-dir D] [--config FILE]` and
 * `npm run restore -- DIR [--data-dir D] [--config FILE]` (core/backup.ts;
 * docs/operations.md, "Backup and restore"). The data directory is
 * `--data-dir`, else the one `npm start` would use (the config file and
 * GATEWAY_DATA_DIR, read as `npm start` reads them). Backup runs while the
 * roles run; restore refuses while one does. Exit codes: 0 done, 1 refused
 * (the reason on stderr), 2 invalid arguments or config.
 */
import { resolve } from 'node:path';
import { BackupRefused, backupDataDirectory, restoreDataDirectory, type ManifestEntry } from './backup.js';
import type { Command, CommandIO } from './commands.js';
import { DataLockError } from './store/data-lock.js';

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

/** Runs `backup` or `restore` with the arguments after the command's name. */
async function run(command: Args['command'], argv: readonly string[], io: CommandIO): Promise<number> {
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
  let dataDir = args.dataDir;
  if (dataDir === undefined) {
    const loaded = io.loadConfig();
    if (loaded === 2) return 2;
    dataDir = loaded.config.dataDir;
  }
  dataDir = resolve(dataDir);
  const progress = (text: string) => void io.stdout.write(`${text}\n`);
  try {
    if (args.command === 'backup') {
      progress(`backup of ${dataDir} into ${resolve(args.out as string)}`);
      const started = Date.now();
      const manifest = await backupDataDirectory(dataDir, args.out as string, progress);
      progress(`wrote ${manifest.files.length} files in ${((Date.now() - started) / 1000).toFixed(1)} s (manifest.json lists them):`);
      for (const f of manifest.files) progress(line(f));
      progress('keep it as secret as the data directory: it holds the keys that unseal the stored credentials.');
    } else {
      progress(`restore of ${resolve(args.from as string)} into ${dataDir}`);
      const { manifest, setAside } = await restoreDataDirectory(args.from as string, dataDir, progress);
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

/** The runtime's own commands: a backup of the data directory every role shares, and its restore. */
export const BACKUP_COMMANDS: readonly Command[] = [
  { name: 'backup', usage: USAGE.split('\n')[0] as string, run: (argv, io) => run('backup', argv, io) },
  { name: 'restore', usage: (USAGE.split('\n')[1] as string).replace(/^ +/, 'usage: '), run: (argv, io) => run('restore', argv, io) },
];
