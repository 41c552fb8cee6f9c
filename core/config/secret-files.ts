/**
 * Secrets from files. Every variable that holds a secret may instead name a
 * file that holds it, as `<NAME>_FILE` (`ADMIN_PASSWORD_FILE`,
 * `PROGRAMS_DATABASE_URL_FILE`, …): systemd's `LoadCredential=` hands a
 * service its secrets as files (`%d/admin-password`), and so do Docker and
 * Kubernetes secrets; a variable set with `Environment=` is shown by
 * `systemctl show` and a unit's journal to whoever may read them.
 * core/main.ts reads the files once at start, before the configuration
 * (which takes PROGRAMS_DATABASE_URL, METRICS_TOKEN, … from the
 * environment), and hands the roles and commands an environment with the
 * values; process.env itself is left as it is. docs/operations.md,
 * "Production start".
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** The variables that hold secrets, each also read from `<NAME>_FILE`. */
export const SECRET_VARIABLES = [
  'ADMIN_PASSWORD', 'GATEWAY_ADMIN_PASSWORD', 'PROGRAMS_ADMIN_PASSWORD', 'METRICS_TOKEN', 'PROGRAMS_DATABASE_URL', 'CLOUD_DATABASE_URL',
  'CLOUD_BROKER_PASSWORD', 'CLOUD_DYNSEC_PASSWORD', 'GATEWAY_CLOUD_TOKEN',
] as const;

/** The suffix of the variable naming a secret's file. */
export const FILE_SUFFIX = '_FILE';

/** Largest secret file read: a password or a connection string, never a document. */
const MAX_SECRET_BYTES = 64 * 1024;

/** A secret's file that cannot be used; the message names the variable and the file, never what it holds. */
export class SecretFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretFileError';
  }
}

/** The file's text without the one line ending an editor or `echo` leaves at its end. */
function readSecret(variable: string, path: string): string {
  const file = resolve(path);
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : (code ?? (err as Error).message);
    throw new SecretFileError(`${variable}: cannot read ${file} (${why})`);
  }
  if (bytes.length > MAX_SECRET_BYTES) throw new SecretFileError(`${variable}: ${file} holds ${bytes.length} bytes; a secret's file holds at most ${MAX_SECRET_BYTES}`);
  return bytes.toString('utf8').replace(/\r?\n$/, '');
}

/**
 * `env` with each secret whose `<NAME>_FILE` is set read from that file.
 * Both the variable and its file set is refused, as is a file that cannot
 * be read (SecretFileError, naming both).
 */
export function withSecretFiles(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  for (const name of SECRET_VARIABLES) {
    const fileVariable = `${name}${FILE_SUFFIX}`;
    const path = env[fileVariable];
    if (path === undefined || path === '') continue;
    if ((env[name] ?? '') !== '') throw new SecretFileError(`${name} and ${fileVariable} are both set; set one (${fileVariable} names a file holding the value)`);
    out[name] = readSecret(fileVariable, path);
    delete out[fileVariable];
  }
  return out;
}
