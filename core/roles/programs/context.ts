/**
 * The context every plugin of the `programs` role receives: the runtime's
 * store, clock and logger, the role's REST registry (served under /api/v1 on
 * its own listener) and the audit chain every change appends to in its own
 * transaction.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { SharedFirstPassword } from '../../auth/first-admin.js';
import type { EventBus } from '../../runtime/event-bus.js';
import type { GatewayLink } from '../../gateway-link/types.js';
import type { RestRegistry } from '../../rest/operation.js';
import type { ServiceRegistry } from '../../runtime/services.js';
import type { AuditChain } from './audit/chain.js';
import type { SqlDatabase } from '../../store/sql-database.js';

/**
 * The program service's events; plugins add theirs by declaration merging:
 *   declare module './context.js' { interface ProgramsEvents { 'version.published': { versionId: string } } }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface ProgramsEvents {}

/** Services plugins of the program service provide to each other, by declaration merging as for events. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface ProgramsServices {}

export interface ProgramsContext {
  /** The role's data directory (shared with the gateway role; the database file, when on SQLite, is its own). */
  dataDir: string;
  /** The role's database: `programs.db` in the data directory, or PostgreSQL shared with other instances (`programs.databaseUrl`); stores keep to docs/databases.md. */
  db: SqlDatabase;
  /** The hash-chained audit log in `db`; append inside `db.write(fn, { transaction: true })`. */
  audit: AuditChain;
  /** The `/api/v1` operations; plugins define theirs at register time. */
  rest: RestRegistry;
  /** The role's event bus; plugins meet on it without importing each other. */
  bus: EventBus<ProgramsEvents>;
  /** Services plugins provide to each other (`ctx.services.provide`, `get`). */
  services: ServiceRegistry<ProgramsServices>;
  /** IANA zone in which calendar dates (audit `from`/`to`) are read. */
  timeZone: string;
  /** Current time, unix ms. */
  now: () => number;
  /** Software version. */
  version: string;
  /** Lines shown once at start beside the URLs (a generated first password); never logged. */
  announcements: string[];
  /** Environment for secrets that never live in files (PROGRAMS_ADMIN_PASSWORD, ADMIN_PASSWORD). */
  env: NodeJS.ProcessEnv;
  /** The first-start password the process generated for all its roles' administrators, when it starts more than one (core/auth/first-admin.ts). */
  sharedFirstPassword?: SharedFirstPassword;
  /** The gateway running in the same process, reached in-process; absent when this process runs the program service alone. */
  localGateway?: GatewayLink;
  /** Whether every request reaches the service over TLS (cookie `Secure` and `__Host-` prefix); a request that arrives over HTTPS (directly or, with trustProxy, through a proxy saying so) counts as TLS too. */
  secure: boolean;
  /** The HTTP app, for the few routes that are not /api/v1 operations (the web console). */
  http: FastifyInstance;
  logger: Logger;
}
