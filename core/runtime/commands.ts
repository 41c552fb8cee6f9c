/**
 * Commands: `node --import tsx core/main.ts <command> [args]` (`npm run
 * reset-admin-password`, `npm run cloud-token`) runs one command instead of
 * starting the roles. A command is declared by the wing of its role
 * (`RoleDefinition.commands`) or by a plugin (`commands` of definePlugin), so
 * it lives beside the code it drives and reaches into no other plugin.
 */
import type { LoadedConfig } from '../config/config.js';

/** Where a command writes. */
export interface CommandOutput {
  write(text: string): unknown;
}

/** What a command is given besides its arguments. */
export interface CommandIO {
  /** The config as `npm start` reads it (`--config FILE` of the command's arguments, the environment), or 2 after the mistake was printed to stderr with its path. */
  loadConfig(): LoadedConfig | 2;
  env: NodeJS.ProcessEnv;
  stdout: CommandOutput;
  stderr: CommandOutput;
}

export interface Command {
  /** The word after `core/main.ts`, e.g. `reset-admin-password`. */
  readonly name: string;
  /** One line saying how to call it (`usage: npm run … -- …`). */
  readonly usage: string;
  /** Runs the command with the arguments after its name; resolves to the process's exit code. */
  run(argv: readonly string[], io: CommandIO): Promise<number>;
}

/** The longest command word quoted back in an error. */
const WORD_MAX_CHARS = 100;

/**
 * Runs the command `argv[0]` names, with the rest of `argv`. Undefined when
 * `argv` names no command (it is empty or starts with an option): the caller
 * starts the roles. A word that is no command is refused (exit 2) with the
 * accepted ones; a command that throws exits 1 with what it threw.
 */
export async function runCommand(commands: readonly Command[], argv: readonly string[], io: CommandIO): Promise<number | undefined> {
  const [word, ...rest] = argv;
  if (word === undefined || word.startsWith('-')) return undefined;
  const command = commands.find((c) => c.name === word);
  if (!command) {
    const accepted = commands.map((c) => c.name).join(', ');
    io.stderr.write(`unknown command '${word.slice(0, WORD_MAX_CHARS)}'; accepted: ${accepted}, or options only (--config FILE, --role NAME) to start the roles\n`);
    return 2;
  }
  try {
    return await command.run(rest, io);
  } catch (err) {
    io.stderr.write(`${command.name} failed: ${(err as Error).stack ?? String(err)}\n`);
    return 1;
  }
}
