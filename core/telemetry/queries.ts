/**
 * Spans of a role's database queries (the program service's, on SQLite or
 * PostgreSQL): a client span per read and per write job, named by the
 * statement's operation and table, under the request's span; never the SQL
 * text or its values. Only wrapped while tracing is on.
 */
import type { SqlDatabase, WriteTx } from '../store/sql-database.js';
import { inSpan, tracingEnabled, type SpanAttributes } from './tracing.js';

const TABLE = /\b(?:FROM|INTO|UPDATE|JOIN)\s+"?([A-Za-z_][A-Za-z0-9_]*)/i;
const OPERATION = /^\s*(?:WITH\b[\s\S]*?\)\s*)?([A-Za-z]+)/;

/** The operation and table of a statement, as span attributes and name (`SELECT versions`). */
export function querySummary(sql: string): { name: string; operation: string; table: string | undefined } {
  const operation = (OPERATION.exec(sql)?.[1] ?? 'QUERY').toUpperCase().slice(0, 16);
  const table = TABLE.exec(sql)?.[1]?.slice(0, 64);
  return { name: table ? `${operation} ${table}` : operation, operation, table };
}

/** `db` whose reads and write jobs are spans while tracing is on; `db` itself otherwise. */
export function traceQueries<D extends SqlDatabase>(db: D): D {
  if (!tracingEnabled()) return db;
  const system = db.dialect.engine === 'postgres' ? 'postgresql' : 'sqlite';
  const read = <T>(sql: string, run: () => Promise<T>): Promise<T> => {
    const { name, operation, table } = querySummary(sql);
    const attributes: SpanAttributes = { 'db.system.name': system, 'db.operation.name': operation, 'db.collection.name': table };
    return inSpan(name, { kind: 'client', childOnly: true, attributes }, run);
  };
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'all') return (sql: string, params?: never) => read(sql, () => target.all(sql, params));
      if (prop === 'get') return (sql: string, params?: never) => read(sql, () => target.get(sql, params));
      if (prop === 'each') return (sql: string, params: never, onRow: never) => read(sql, () => target.each(sql, params, onRow));
      if (prop === 'write') {
        return <T>(job: (tx: WriteTx) => Promise<T>, options?: { transaction?: boolean }) =>
          inSpan(options?.transaction ? 'transaction' : 'write', { kind: 'client', childOnly: true, attributes: { 'db.system.name': system, 'db.operation.name': options?.transaction ? 'transaction' : 'write' } }, () => target.write(job, options));
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
