/**
 * Audit records of refused access — an invalid token or session, a caller
 * refused for its role or for a missing operator — written at most once per
 * key and window, so a flood of refusals cannot grow the audit without
 * bound. The key says what repeats: the source address for invalid
 * credentials, the principal and operation for a refusal.
 *
 * The window is kept in this instance's memory on purpose: N instances on
 * one database write at most N records per key and window, still bounded,
 * while a shared count would put a database write on every refused request
 * (docs/operations.md, "What is per instance").
 */
import type { AuditChain, AuditEntry } from '../../core/roles/programs/audit/chain.js';
import type { SqlDatabase } from '../../core/store/database.js';

/** One record per key in this window. */
export const REFUSAL_AUDIT_WINDOW_MS = 60_000;
/** Keys remembered at once; past this, a new key is recorded only once an old one's window has passed. */
export const REFUSAL_AUDIT_KEYS = 1000;

export class RefusalAudit {
  private readonly lastAt = new Map<string, number>();

  constructor(
    private readonly db: SqlDatabase,
    private readonly audit: AuditChain,
    private readonly now: () => number,
  ) {}

  /** Writes `entry` unless a record with the same key was written within the window. */
  async record(key: string, entry: AuditEntry): Promise<void> {
    const now = this.now();
    const last = this.lastAt.get(key);
    if (last !== undefined && now - last < REFUSAL_AUDIT_WINDOW_MS) return;
    if (last === undefined && this.lastAt.size >= REFUSAL_AUDIT_KEYS) {
      for (const [k, at] of this.lastAt) if (now - at >= REFUSAL_AUDIT_WINDOW_MS) this.lastAt.delete(k);
      if (this.lastAt.size >= REFUSAL_AUDIT_KEYS) return;
    }
    this.lastAt.set(key, now);
    await this.db.write((tx) => this.audit.append(tx, entry), { transaction: true });
  }
}
