/**
 * `npm run cloud-token -- [admin] <create NAME | list | revoke ID | rotate ID> [--config FILE]`
 * (the cloud wing's command, run by core/main.ts): the cloud relay's gateway tokens (with `admin`: the keys of its admin HTTP
 * interface) in `cloud.db` of the data directory, or in the PostgreSQL
 * database of CLOUD_DATABASE_URL / `cloud.databaseUrl` that cloud instances
 * share (the config file and GATEWAY_DATA_DIR are read as `npm start` reads them). A
 * new token is printed once; only its hash is stored. The cloud may be
 * running: it reads the tokens at every check. With `cloud.dynamicSecurity`
 * (an external Mosquitto whose gateway clients the cloud keeps) it changes
 * the broker's clients as the running cloud does: a new token's client is
 * added before the token is stored, a rotated or revoked one's removed.
 * It names on stderr the database it read or wrote (never its credentials)
 * and warns while no cloud has started on it (cloud-starts.ts).
 * docs/cloud-relay.md.
 */
import { join, resolve } from 'node:path';
import type { Command, CommandIO } from '../../../runtime/commands.js';
import { AdminKeys, GatewayTokens, CLOUD_MIGRATIONS } from '../tokens.js';
import { CLOUD_DATABASE_FILE } from '../role.js';
import { Database, SqliteDatabase } from '../../../store/database.js';
import type { SqlDatabase } from '../../../store/sql-database.js';
import { prepareDataDirectory } from '../../../store/data-directory.js';
import { applyMigrations, BASE_SCHEMA_OWNER } from '../../../store/migrations.js';
import type { MosquittoDynamicSecurity } from '../../../mqtt/dynamic-security.js';
import { cloudRoleSettings } from '../config.js';
import { connectGatewayUsers, gatewayUsersOptions, type GatewayUsersSection } from '../gateway-users.js';
import { openTokenPostgres, tokenDatabaseSource } from '../token-database.js';
import { lastCloudStart } from '../cloud-starts.js';
import { PostgresDatabase } from '../../../store/postgres-database.js';

const USAGE = 'usage: npm run cloud-token -- [admin] create NAME | list | revoke ID | rotate ID  [--config FILE]\n  (admin: the keys of the cloud\'s admin HTTP interface, /admin/gateway-tokens)';

/** The tokens' database as the cloud opens it: CLOUD_DATABASE_URL or `cloud.databaseUrl` (PostgreSQL), else cloud.db in the data directory. */
async function openTokens(config: { dataDir: string; cloud?: { databaseUrl?: string | undefined } }, env: NodeJS.ProcessEnv): Promise<SqlDatabase> {
  const shared = tokenDatabaseSource(config.cloud ?? {}, env);
  if (shared) return openTokenPostgres(shared, { applicationName: 'cnc-cloud-token' });
  const dataDir = resolve(config.dataDir);
  prepareDataDirectory(dataDir);
  const db = await Database.open(join(dataDir, CLOUD_DATABASE_FILE));
  try {
    await applyMigrations(db, BASE_SCHEMA_OWNER, CLOUD_MIGRATIONS);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}

/** Which database the command reads or writes (a file, or PostgreSQL's server and database without credentials). */
function describeTokens(db: SqlDatabase): string {
  if (db instanceof PostgresDatabase) return `${db.target} (PostgreSQL)`;
  return db instanceof SqliteDatabase ? `${db.file} (SQLite)` : 'the token database';
}

/** Names the database on stderr, and warns when no cloud has started on it: its tokens would reach no cloud. */
async function sayWhere(db: SqlDatabase, verb: string, io: CommandIO): Promise<void> {
  io.stderr.write(`${verb === 'list' ? 'tokens read from' : 'tokens written to'} ${describeTokens(db)}\n`);
  const last = await lastCloudStart(db);
  if (last) {
    io.stderr.write(`last used by the cloud on ${last.host}, started ${new Date(last.startedAt).toISOString()}\n`);
    return;
  }
  io.stderr.write('warning: no cloud has started on this database yet; a cloud reads its tokens from CLOUD_DATABASE_URL (or cloud.databaseUrl), else from cloud.db in its data directory: give this command the same\n');
}

/** The command and its operand, without --config and its value. */
function command(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--config') i++;
    else if (!arg.startsWith('--config=')) out.push(arg);
  }
  return out;
}

async function run(argv: readonly string[], io: CommandIO): Promise<number> {
  const words = command(argv);
  const admin = words[0] === 'admin';
  const [verb, operand, ...rest] = admin ? words.slice(1) : words;
  const what = admin ? 'admin key' : 'token';
  if (!verb || verb === '--help' || verb === '-h' || rest.length > 0) {
    io.stdout.write(`${USAGE}\n`);
    return verb === '--help' || verb === '-h' ? 0 : 2;
  }
  const loaded = io.loadConfig();
  if (loaded === 2) return 2;
  let db: SqlDatabase;
  try {
    db = await openTokens(loaded.config, io.env);
  } catch (err) {
    io.stderr.write(`${(err as Error).message}\n`);
    return 1;
  }
  let users: MosquittoDynamicSecurity | undefined;
  try {
    await sayWhere(db, verb, io);
    // The broker's gateway clients change with the gateway tokens (not for admin keys, nor for a list).
    const section = (loaded.config as { cloud?: GatewayUsersSection }).cloud ?? {};
    const dynsec = !admin && verb !== 'list' ? gatewayUsersOptions(section, io.env, cloudRoleSettings(loaded.config).topicPrefix) : undefined;
    if (dynsec) users = await connectGatewayUsers(dynsec);
    const onMade = users && ((id: string, token: string) => users!.addGateway(id, token));
    const tokens = admin ? await AdminKeys.open(db) : await GatewayTokens.open(db);
    switch (verb) {
      case 'create': {
        if (!operand) break;
        const made = await tokens.create(operand, onMade);
        if (admin) {
          io.stdout.write(`admin key '${made.record.name}' (id ${made.record.id}), shown once:\n${made.token}\n`);
          io.stdout.write('Send it as Authorization: Bearer <key> to the cloud\'s /admin/gateway-tokens.\n');
          return 0;
        }
        io.stdout.write(`gateway token for '${made.record.name}' (id ${made.record.id}), shown once:\n${made.token}\n`);
        io.stdout.write('Give it to that gateway as cloudLink.accessToken or GATEWAY_CLOUD_TOKEN (or through its /api/security/cloud-link/set), and to its MCP clients as the accessToken header.\n');
        return 0;
      }
      case 'list': {
        for (const t of await tokens.list()) {
          const state = t.revokedAt === null ? 'valid' : `revoked ${new Date(t.revokedAt).toISOString()}${t.replacedBy ? ` (rotated to ${t.replacedBy})` : ''}`;
          io.stdout.write(`${t.id}  ${t.name}  created ${new Date(t.createdAt).toISOString()}  ${state}\n`);
        }
        return 0;
      }
      case 'revoke': {
        if (!operand) break;
        if (!(await tokens.revoke(operand))) {
          io.stderr.write(`no valid ${what} with id '${operand.slice(0, 64)}'; npm run cloud-token --${admin ? ' admin' : ''} list shows them\n`);
          return 1;
        }
        await users?.removeGateway(operand);
        io.stdout.write(`${what} ${operand} revoked${admin ? '' : users ? '; its broker client removed (the broker disconnected it)' : '; running clouds on this database disconnect that gateway within a few seconds (cloud.revocationPollMs)'}\n`);
        return 0;
      }
      case 'rotate': {
        if (!operand) break;
        const next = await tokens.rotate(operand, onMade);
        if (!next) {
          io.stderr.write(`no valid ${what} with id '${operand.slice(0, 64)}'; npm run cloud-token --${admin ? ' admin' : ''} list shows them\n`);
          return 1;
        }
        await users?.removeGateway(operand);
        io.stdout.write(`${what} ${operand} revoked; the new ${what} for '${next.record.name}' (id ${next.record.id}), shown once:\n${next.token}\n`);
        return 0;
      }
      default:
    }
    io.stderr.write(`${USAGE}\n`);
    return 2;
  } catch (err) {
    io.stderr.write(`${(err as Error).message}\n`);
    return 1;
  } finally {
    await users?.close().catch(() => undefined);
    await db.close();
  }
}

/** The command: the cloud's gateway tokens and admin keys in cloud.db. */
export const cloudTokenCommand: Command = { name: 'cloud-token', usage: USAGE, run };
