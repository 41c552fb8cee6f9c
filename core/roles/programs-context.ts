/**
 * The context every plugin of the `programs` role receives: the runtime's
 * store, clock and logger, the role's REST registry (served under /api/v1 on
 * its own listener) and the audit chain every change appends to in its own
 * transaction.
 */
import type { RestRegistry } from '../rest/operation.js';
import type { AuditChain } from '../store/audit-chain.js';
import type { Database } from '../store/database.js';

export interface ProgramsContext {
  /** The role's data directory (shared with the gateway role; the database file is its own). */
  dataDir: string;
  /** The role's database, `programs.db` in the data directory. */
  db: Database;
  /** The hash-chained audit log in `db`; append inside `db.write(fn, { transaction: true })`. */
  audit: AuditChain;
  /** The `/api/v1` operations; plugins define theirs at register time. */
  rest: RestRegistry;
  /** IANA zone in which calendar dates (audit `from`/`to`) are read. */
  timeZone: string;
  /** Current time, unix ms. */
  now: () => number;
  /** Software version. */
  version: string;
  /** Lines shown once at start beside the URLs (a generated first password); never logged. */
  announcements: string[];
  /** Environment for secrets that never live in files (PROGRAMS_ADMIN_PASSWORD). */
  env: NodeJS.ProcessEnv;
  /** Whether the listener serves TLS (cookie `Secure` and `__Host-` prefix). */
  secure: boolean;
}
