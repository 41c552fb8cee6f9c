/** Shared set-up for the audit chain tests: a fresh database, a scripted clock, direct tampering. */
import { afterEach } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditChain, type AuditEntry } from '../../../../../core/roles/programs/audit/chain.js';
import { Database, type SqlValue } from '../../../../../core/store/database.js';

export const T0 = Date.UTC(2026, 10, 24, 8, 0, 0);

/** A database file in a temp dir with an AuditChain and a `clock.now` the test sets. */
export async function openChain(opts: { timeZone?: string; start?: number } = {}) {
  const db = await Database.open(join(mkdtempSync(join(tmpdir(), 'gw-audit-')), 'service.db'));
  const clock = { now: opts.start ?? T0 };
  const chain = await AuditChain.open(db, { timeZone: opts.timeZone ?? 'UTC', clock: () => clock.now });
  return { db, chain, clock };
}

/** An `openChain` for one test file whose databases are closed after each test. */
export function chainsClosedAfterEach(): typeof openChain {
  const open: Database[] = [];
  afterEach(async () => {
    while (open.length) await open.pop()?.close();
  });
  return async (opts = {}) => {
    const e = await openChain(opts);
    open.push(e.db);
    return e;
  };
}

/** A plausible entry; `i` varies principal, machine and entity. */
export function entry(i: number, over: Partial<AuditEntry> = {}): AuditEntry {
  return {
    principalName: i % 3 === 0 ? 'alice' : 'mes-token',
    onBehalfOf: i % 3 === 0 ? null : 'bob',
    authMethod: i % 3 === 0 ? 'session' : 'serviceToken',
    category: i % 2 === 0 ? 'deployment' : 'vault',
    action: i % 2 === 0 ? 'deploy' : 'upload',
    entityType: i % 2 === 0 ? 'deployment' : 'version',
    entityId: String(100 + i),
    machine: i % 2 === 0 ? `M${i % 4}` : null,
    details: { i, note: `change ${i}` },
    ...over,
  };
}

/** Appends `n` records, each in its own transaction, one millisecond apart. */
export async function fill(env: Awaited<ReturnType<typeof openChain>>, n: number, first = 0): Promise<void> {
  for (let i = first; i < first + n; i++) {
    env.clock.now += 1;
    await env.db.write((tx) => env.chain.append(tx, entry(i)), { transaction: true });
  }
}

/**
 * Runs SQL straight on the database as someone with the file would: the
 * append-only and linking triggers are dropped first.
 */
export async function tamper(db: Database, statements: [string, SqlValue[]?][]): Promise<void> {
  await db.write(
    async (tx) => {
      for (const name of ['audit_log_no_update', 'audit_log_no_delete', 'audit_log_links_to_head', 'audit_log_moves_head']) {
        await tx.run(`DROP TRIGGER IF EXISTS ${name}`);
      }
      for (const [sql, params] of statements) await tx.run(sql, params);
    },
    { transaction: true },
  );
}
