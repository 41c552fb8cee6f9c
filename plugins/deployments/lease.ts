/**
 * Leases: which program-service instance drives a deployment's or a trial's
 * actor. Every instance has a holder id (host, process and a random part,
 * new at each start); a leased row names its holder, when the lease ends,
 * and its epoch, which grows at every claim. The holder renews its leases
 * while it works (every third of the lease time) and every state it stores
 * renews that row's; a row whose lease has ended is claimed by whichever
 * instance looks first (`SELECT … FOR UPDATE SKIP LOCKED` on PostgreSQL, so
 * two instances never claim the same row), and its actor is restored from
 * the stored snapshot there. A state is stored, and a transfer made, only
 * under the epoch its holder claimed the row with (fencing): a holder
 * stalled past its lease, whose row another instance has claimed since,
 * stores nothing more and touches no machine again (HeldRows, and the
 * gateway's check of the epoch). docs/programs-deployments.md, "Several
 * instances".
 */
import { newInstanceId } from '../../core/runtime/instance-id.js';
import type { SqlDatabase } from '../../core/store/sql-database.js';
import { COLUMNS, rowOf, type DeploymentRow } from './records.js';

/** How long a lease lasts without being renewed: a dead instance's work is taken over this long after its last renewal. */
export const DEFAULT_LEASE_MS = 30_000;

export interface Lease {
  /** This instance's holder id. */
  readonly holder: string;
  /** The lease time, ms. */
  readonly ms: number;
}

export function leaseOf(options: { holder?: string; ms?: number } = {}): Lease {
  const ms = options.ms ?? DEFAULT_LEASE_MS;
  if (!Number.isInteger(ms) || ms < 300) throw new Error(`the lease time must be an integer of at least 300 ms; it is ${ms}`);
  return { holder: options.holder ?? newInstanceId(), ms };
}

/** Rows claimed in one pass; another pass follows while there are more. */
export const CLAIM_LIMIT = 200;

/** A table whose unfinished rows are leased: `id`, `holder`, `lease_until`, `lease_epoch`, `finished_at`, `created_at` columns. */
export interface LeasedTable {
  readonly table: string;
  /** The columns a claim answers (`lease_epoch` among them). */
  readonly columns: string;
}

export const DEPLOYMENTS: LeasedTable = { table: 'deploy_deployments', columns: COLUMNS };
export const TRIALS: LeasedTable = { table: 'deploy_trials', columns: '*' };

/** What one claim may take. */
export interface ClaimOptions {
  /** Every unfinished row, whoever held it (a SQLite database's previous run, at start). */
  everything?: boolean;
  /** Rows at most (CLAIM_LIMIT unless given). */
  limit?: number;
  /**
   * At most `most` rows per value of `column` (a deployment's gateway), less
   * what this instance holds of that value already (`held`): an instance
   * claims what it can start soon, and the rest stays claimable by the others.
   */
  perGroup?: { column: string; most: number; held: ReadonlyMap<string, number> };
}

/**
 * Claims unfinished rows of `t` for `lease.holder`: those whose lease has
 * ended (or that nobody held), or with `everything` every unfinished one (a
 * SQLite database has one process, so at start whatever is unfinished was
 * left by this data directory's previous run), the oldest first. Each claim
 * raises the row's epoch by one. One statement, one round trip: on
 * PostgreSQL it locks the rows it takes (`SKIP LOCKED`: another instance's
 * claim at the same moment takes others, never the same) and checks again
 * that their lease has ended. Answers the rows as claimed, with their new epoch.
 */
export async function claimRows(db: SqlDatabase, t: LeasedTable, lease: Lease, now: number, options: ClaimOptions = {}): Promise<Record<string, unknown>[]> {
  const claimable = `finished_at IS NULL${options.everything ? '' : ' AND (lease_until IS NULL OR lease_until < ?)'}`;
  const claimableParams = options.everything ? [] : [now];
  let chosen = '';
  const chosenParams: (string | number)[] = [];
  if (options.perGroup) {
    const { column, most, held } = options.perGroup;
    const known = [...held].filter(([, n]) => n > 0);
    // Rows are ranked within their group, the oldest first; a group takes as many as it has room for here.
    const room = known.length > 0 ? `CASE ${column} ${known.map(() => 'WHEN ? THEN CAST(? AS INTEGER)').join(' ')} ELSE CAST(? AS INTEGER) END` : 'CAST(? AS INTEGER)';
    chosen = ` AND id IN (SELECT id FROM (SELECT id, ${column}, ROW_NUMBER() OVER (PARTITION BY ${column} ORDER BY created_at, id) AS claim_rank FROM ${t.table} WHERE ${claimable}) ranked WHERE claim_rank <= ${room})`;
    chosenParams.push(...claimableParams, ...known.flatMap(([group, n]) => [group, most - n]), most);
  }
  // The rows are picked (and on PostgreSQL locked) once, in a WITH, so the limit holds: a subquery in the UPDATE's WHERE may be run again.
  const rows = await db.write((tx) => tx.all(
    `WITH picked(pid) AS (SELECT id FROM ${t.table} WHERE ${claimable}${chosen} ORDER BY created_at, id${options.everything ? '' : ' LIMIT ?'}${tx.dialect.claimRows})
     UPDATE ${t.table} SET holder = ?, lease_until = ?, lease_epoch = lease_epoch + 1
     FROM picked WHERE ${t.table}.id = picked.pid AND ${claimable}
     RETURNING ${t.columns}`,
    [...claimableParams, ...chosenParams, ...(options.everything ? [] : [options.limit ?? CLAIM_LIMIT]), lease.holder, now + lease.ms, ...claimableParams],
  ));
  // RETURNING keeps no order: the oldest first, as claimed.
  return rows.sort((a, b) => Number(a.created_at) - Number(b.created_at) || (String(a.id) < String(b.id) ? -1 : String(a.id) > String(b.id) ? 1 : 0))
    .map((r) => ({ ...r, lease_epoch: Number(r.lease_epoch) }));
}

/**
 * Renews this instance's leases on `t` (with `ids`, on those rows only);
 * answers the unfinished rows it still holds, each with its epoch.
 */
export async function renewRows(db: SqlDatabase, t: LeasedTable, lease: Lease, now: number, ids?: readonly string[]): Promise<Map<string, number>> {
  if (ids?.length === 0) return new Map();
  return db.write(async (tx) => {
    const only = ids ? ` AND id IN (${tx.dialect.textsOf})` : '';
    const params = ids ? [JSON.stringify(ids)] : [];
    await tx.run(`UPDATE ${t.table} SET lease_until = ? WHERE holder = ? AND finished_at IS NULL${only}`, [now + lease.ms, lease.holder, ...params]);
    const held = await tx.all<{ id: string; lease_epoch: number }>(`SELECT id, lease_epoch FROM ${t.table} WHERE holder = ? AND finished_at IS NULL${only}`, [lease.holder, ...params]);
    return new Map(held.map((r) => [String(r.id), Number(r.lease_epoch)]));
  }, { transaction: true });
}

/** Ends this instance's leases on `t` at once (a clean stop), so another instance takes its work over without waiting. */
export async function releaseRows(db: SqlDatabase, t: LeasedTable, lease: Lease): Promise<void> {
  await db.write((tx) => tx.run(`UPDATE ${t.table} SET lease_until = NULL WHERE holder = ? AND finished_at IS NULL`, [lease.holder]));
}

/**
 * Raises the epoch of a row this instance holds under `epoch` to `to`, when
 * it still holds it under that epoch: a gateway has seen a higher epoch of
 * the row's lease than the database holds (the database was restored from a
 * backup taken before that epoch was claimed), and would refuse every
 * transfer under the older ones. A row another instance has claimed since is
 * left as it is. Answers the row as raised, or undefined.
 */
export async function raiseEpoch(db: SqlDatabase, t: LeasedTable, lease: Lease, id: string, epoch: number, to: number, now: number): Promise<Record<string, unknown> | undefined> {
  return db.write(async (tx) => {
    const raised = await tx.run(
      `UPDATE ${t.table} SET lease_epoch = ?, lease_until = ? WHERE id = ? AND holder = ? AND lease_epoch = ? AND finished_at IS NULL`,
      [to, now + lease.ms, id, lease.holder, epoch],
    );
    if (raised.changes !== 1) return undefined;
    return tx.get(`SELECT ${t.columns} FROM ${t.table} WHERE id = ?`, [id]);
  }, { transaction: true });
}

/** Claims unfinished deployments (see `claimRows`). */
export async function claimDeployments(db: SqlDatabase, lease: Lease, now: number, options: ClaimOptions = {}): Promise<DeploymentRow[]> {
  return (await claimRows(db, DEPLOYMENTS, lease, now, options)).map(rowOf);
}

/** Raises a deployment's epoch above one a gateway has seen (see `raiseEpoch`); answers the row as raised, or undefined. */
export async function raiseDeploymentEpoch(db: SqlDatabase, lease: Lease, id: string, epoch: number, to: number, now: number): Promise<DeploymentRow | undefined> {
  const row = await raiseEpoch(db, DEPLOYMENTS, lease, id, epoch, to, now);
  return row ? rowOf(row) : undefined;
}

/** Renews this instance's leases on deployments (with `ids`, on those only); answers the unfinished deployments it still holds, each with its epoch. */
export const renewDeployments = (db: SqlDatabase, lease: Lease, now: number, ids?: readonly string[]): Promise<Map<string, number>> => renewRows(db, DEPLOYMENTS, lease, now, ids);

/** Ends this instance's leases on deployments at once (a clean stop). */
export const releaseDeployments = (db: SqlDatabase, lease: Lease): Promise<void> => releaseRows(db, DEPLOYMENTS, lease);

/** How often at most an instance looks for rows whose lease has ended, so a dead instance's work waits at most this long after its lease. */
export const CLAIM_EVERY_MS = 1_000;

/**
 * The lease keeper of a runner: runs `pass` every `CLAIM_EVERY_MS` (or every
 * third of the lease time when that is shorter), each claiming what ended,
 * and with `renew` true at least every third of the lease time (renew, stop
 * what was lost). A dead holder's last renewal was at most a third of the lease before
 * it died, so its work is taken over within the lease plus one claim interval
 * of its death, not the lease plus a third of it.
 */
export function keepLeases(lease: Lease, pass: (renew: boolean) => Promise<void>): { stop(): Promise<void> } {
  const renewEvery = Math.max(100, Math.floor(lease.ms / 3));
  const every = Math.min(renewEvery, CLAIM_EVERY_MS);
  // Real time, as the interval's: the runner's clock may be a test's.
  let renewedAt = performance.now();
  return repeatPasses(every, () => {
    // Renewed at the last pass before a third of the lease has gone by, never after it.
    const renew = performance.now() - renewedAt + every >= renewEvery;
    if (renew) renewedAt = performance.now();
    return pass(renew);
  });
}

/** Runs `pass` every `ms`, one pass at a time (a pass still running when the next is due lets it go); `stop` waits for the one under way. */
export function repeatPasses(ms: number, pass: () => Promise<void>): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= pass().finally(() => (running = undefined));
  }, ms);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
