/**
 * What the administration of users and service tokens shares: the caller as
 * a grantor, and lists that leave out the accounts holding more than it.
 */
import type { AnyRestOperation, RestPrincipal } from '../../../core/rest/operation.js';
import type { ScryptCost } from '../../../core/auth/passwords.js';
import type { Throttle } from '../../../core/auth/login-throttle.js';
import type { ProgramsContext } from '../../../core/roles/programs/context.js';
import { grantorOf, type Grantor } from '../grants.js';
import type { AccountStore } from '../store.js';

/** What every account operation is made with. */
export interface AccountsDeps {
  ctx: ProgramsContext;
  store: AccountStore;
  throttle: Throttle;
  passwordCost: ScryptCost;
  /** A hash at the production cost, verified for unknown users so that their login takes as long. */
  dummyHash: string;
}

/** Rows read at a time while a list skips accounts the caller may not see. */
const SCAN_BATCH = 200;

/** The next `limit + 1` rows after `after` that `visible` keeps, reading the table in batches by id. */
export async function visibleAfter<T extends { id: string }>(list: (limit: number, after: string | null) => Promise<T[]>, visible: (row: T) => boolean, limit: number, after: string | null): Promise<T[]> {
  const out: T[] = [];
  for (let cursor = after; ;) {
    const rows = await list(SCAN_BATCH, cursor);
    for (const row of rows) if (visible(row) && out.push(row) > limit) return out;
    if (rows.length < SCAN_BATCH) return out;
    cursor = (rows[rows.length - 1] as T).id;
  }
}

/** The caller as a grantor, and the user on whose authority it acts (the owner of the tokens it makes). */
export async function callerOf(store: AccountStore, p: RestPrincipal): Promise<{ grantor: Grantor; ownerUserId: string | null }> {
  if (p.kind === 'user') return { grantor: grantorOf(p), ownerUserId: p.id };
  const token = await store.token(p.id);
  return { grantor: grantorOf(p, { expiresAt: token?.expiresAt ?? null }), ownerUserId: token?.ownerUserId ?? null };
}

/** One account operation, made from the plugin's deps. */
export type AccountOperation = (deps: AccountsDeps) => AnyRestOperation;
