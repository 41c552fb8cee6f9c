/**
 * A database that does not answer, told apart from a statement that failed:
 * the PostgreSQL engine (postgres-database.ts) turns a failure to reach the
 * server (refused, reset, timed out, a host that does not resolve, a server
 * shutting down or starting up, no connection slot free, a connection that
 * ended under a statement) into a DatabaseUnavailableError, so the surfaces
 * answer 503 with Retry-After, as for any other peer that is away, instead
 * of a 500 that says something is broken; and the runtime's database wait
 * says why in `/readyz` (core/runtime/database-wait.ts). A statement the server
 * refused (a constraint, a syntax error) stays what it was.
 */

/** System error codes of a connection that could not be made or was lost. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ECONNABORTED']);

/** SQLSTATEs of a server that is away for now: shutting down (57P01, 57P02), starting up (57P03), out of connection slots (53300), and connection exceptions (class 08). */
const AWAY_STATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** What node-postgres says when a connection ends or cannot be had, without a code. */
const UNREACHABLE_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable|Connection terminated due to connection timeout)/;

/** The database did not answer; the message names no server, user or password. */
export class DatabaseUnavailableError extends Error {
  constructor(
    /** Why, in a few words for `/readyz` and a 503 (`connection refused`, `server starting up`, …). */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`the database does not answer: ${reason}`, options);
    this.name = 'DatabaseUnavailableError';
  }
}

/** Why `err` means the server is not reachable now, in a few words; undefined for any other failure. */
export function unavailableReason(err: unknown): string | undefined {
  if (err instanceof DatabaseUnavailableError) return err.reason;
  const code = (err as { code?: unknown } | undefined)?.code;
  const message = String((err as Error | undefined)?.message ?? '');
  if (typeof code === 'string') {
    if (code === 'ECONNREFUSED') return 'connection refused';
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host name not found';
    if (code === 'ETIMEDOUT') return 'no answer (timed out)';
    if (UNREACHABLE_CODES.has(code)) return 'connection lost';
    if (code === '57P03') return 'server starting up';
    if (code === '53300') return 'no connection slot free';
    if (AWAY_STATES.has(code)) return 'server shutting down';
    if (code.startsWith('08')) return 'connection lost';
    if (code === '28P01' || code === '28000') return 'authentication refused';
    if (code === '3D000') return 'database does not exist';
  }
  if (/timeout/i.test(message) && UNREACHABLE_MESSAGES.test(message)) return 'no answer (timed out)';
  if (UNREACHABLE_MESSAGES.test(message)) return 'connection lost';
  return undefined;
}

/** `err` as a DatabaseUnavailableError when it means the server is away, else `err` itself. */
export function asUnavailable(err: unknown): unknown {
  if (err instanceof DatabaseUnavailableError) return err;
  const reason = unavailableReason(err);
  return reason === undefined ? err : new DatabaseUnavailableError(reason, { cause: err });
}
