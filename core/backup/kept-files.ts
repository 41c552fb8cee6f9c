/**
 * What the parts of a build keep in the data directory, each declared where
 * the part is defined: a role its database (`RoleDefinition.databaseFile`)
 * and its own files (`keeps`), a plugin its files (`definePlugin({ keeps })`),
 * a driver its directories (`DriverFactory.keeps`), the runtime its own
 * (`RUNTIME_KEEPS`). `npm run backup` copies what they declare and `npm run
 * restore` puts it back and locks every declared database (core/backup/backup.ts),
 * so a part that adds a file to the data directory declares it and the
 * backup follows; docs/operations.md, "Backup and restore".
 */
import { METRICS_TOKEN_FILE } from '../telemetry/metrics-token.js';

/** Files a part keeps, as paths relative to the data directory (`/`-separated). */
export interface KeptFiles {
  /** SQLite databases: copied with SQLite's online backup while the roles run; restore takes each one's lock. */
  readonly databases?: readonly string[];
  /** Files copied as they are (keys, identities, settings). */
  readonly files?: readonly string[];
  /** Directories copied whole, with everything below them (e.g. the OPC UA client's `opcua/pki`). */
  readonly directories?: readonly string[];
}

/** What every role keeps whatever its parts: the hash of the metrics token (core/telemetry/metrics-token.ts). */
export const RUNTIME_KEEPS: KeptFiles = { files: [METRICS_TOKEN_FILE] };

/** One declaration with the part that made it, for messages. */
export interface KeptDeclaration {
  /** `the runtime`, `role 'gateway'`, `plugin 'auth'`, `driver 'opcua'`. */
  owner: string;
  keeps: KeptFiles;
}

/** Every file a build keeps, each path once, in declaration order. */
export interface KeptPlan {
  databases: readonly string[];
  files: readonly string[];
  directories: readonly string[];
  /** Who declared each path (the first declaration), for messages. */
  owners: ReadonlyMap<string, string>;
}

/**
 * Whether `path` is a relative path inside the data directory: `/`-separated
 * segments, none empty, `.` or `..`, no backslash or control character, at
 * most 1,024 characters. Other characters are allowed: the OPC UA client
 * names a trusted certificate `<common name>[<fingerprint>].der`.
 */
export function isKeptPath(path: string): boolean {
  // eslint-disable-next-line no-control-regex
  if (path.length === 0 || path.length > 1024 || /[\\\u0000-\u001f\u007f]/.test(path)) return false;
  return path.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

/**
 * The plan of `declarations`: each path once, in order. A path that is not
 * inside the data directory, or one declared as two kinds (a database by one
 * part and a file by another), is a programming mistake and throws, naming
 * both parts.
 */
export function keptPlan(declarations: readonly KeptDeclaration[]): KeptPlan {
  const kinds = new Map<string, { kind: keyof KeptFiles; owner: string }>();
  const plan = { databases: [] as string[], files: [] as string[], directories: [] as string[] };
  for (const { owner, keeps } of declarations) {
    for (const kind of ['databases', 'files', 'directories'] as const) {
      for (const path of keeps[kind] ?? []) {
        if (!isKeptPath(path)) throw new Error(`${owner} keeps '${path}', which is not a relative path inside the data directory`);
        const before = kinds.get(path);
        if (before && before.kind !== kind) throw new Error(`'${path}' is kept as ${before.kind} by ${before.owner} and as ${kind} by ${owner}`);
        if (before) continue;
        kinds.set(path, { kind, owner });
        plan[kind].push(path);
      }
    }
  }
  return { ...plan, owners: new Map([...kinds].map(([path, { owner }]) => [path, owner])) };
}
