/**
 * `npm run reset-admin-password -- [--config FILE] [--user NAME]` (the auth
 * plugin's command, run by core/main.ts): sets a new password for a user
 * (default `admin`) in the gateway's database, for someone with access to
 * the data directory who lost the administrator password. The config file
 * and GATEWAY_DATA_DIR are read as `npm start` reads them. The gateway must
 * be stopped. See docs/operations.md.
 */
import type { Command } from '../../core/runtime/commands.js';
import { PasswordResetRefused, resetAdminPassword } from './password-reset.js';
import { ADMIN_USERNAME } from './user-store.js';

const USAGE = 'usage: npm run reset-admin-password -- [--config FILE] [--user NAME]';

/** Reads `--user NAME` or `--user=NAME`; refuses any argument other than those and --config. */
function parseArgs(argv: readonly string[]): { username: string } {
  let username = ADMIN_USERNAME;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--config' || arg === '--user') {
      const value = argv[++i];
      if (!value) throw new PasswordResetRefused(`${arg}: found nothing; expected a value after ${arg}\n${USAGE}`);
      if (arg === '--user') username = value;
    } else if (arg.startsWith('--user=')) username = arg.slice('--user='.length);
    else if (!arg.startsWith('--config=')) throw new PasswordResetRefused(`unknown argument '${arg}'; accepted: --config FILE, --user NAME\n${USAGE}`);
  }
  return { username };
}

/** The command: reads the config as `npm start` does, resets the password, prints where and what. */
export const resetAdminPasswordCommand: Command = {
  name: 'reset-admin-password',
  usage: USAGE,
  async run(argv, io) {
    if (argv.includes('--help') || argv.includes('-h')) {
      io.stdout.write(`${USAGE}\n`);
      return 0;
    }
    const loaded = io.loadConfig();
    if (loaded === 2) return 2;
    try {
      const { username } = parseArgs(argv);
      const result = await resetAdminPassword({ config: loaded.config, username, env: io.env });
      const lines = [
        '',
        `  ${result.created ? 'created administrator' : 'password reset for'} '${result.username}'${result.isAdmin ? '' : ' (not an administrator)'}`,
        `  data:      ${result.dataDir} (SQLite: gateway.db)`,
        result.generatedPassword === undefined
          ? '  password:  from GATEWAY_ADMIN_PASSWORD'
          : `  password:  ${result.generatedPassword}   (shown once; change it with POST /api/auth/change-password)`,
        `  JWTs issued to '${result.username}' before now are invalid; their secret keys are kept.`,
        '  Start the gateway and log in with the new password.',
        '',
      ];
      io.stdout.write(lines.join('\n') + '\n');
      return 0;
    } catch (err) {
      if (err instanceof PasswordResetRefused) {
        io.stderr.write(`reset-admin-password: ${err.message}\n`);
        return 1;
      }
      throw err;
    }
  },
};
