/**
 * The cloud role's tokens, shown once and stored as the SHA-256 of the secret
 * (core/auth/bearer-tokens.ts):
 * - gateway tokens `cgw_<id>_<secret>`: both the credential a gateway
 *   connects to the broker with and what an MCP client sends in
 *   `accessToken` to select that gateway (GW-85). Rotating gives a new token
 *   for the same gateway name (a new id in topics: the gateway reconnects
 *   with the new token); revoking ends it.
 * - admin keys `cadm_<id>_<secret>`: what the cloud's admin HTTP interface
 *   (/admin/gateway-tokens) takes as `Authorization: Bearer`.
 */
import { createBearerToken, parseBearerToken, secretMatches } from '../../auth/bearer-tokens.js';
import type { Migration } from '../../store/migrations.js';
import type { SqlDatabase, WriteTx } from '../../store/sql-database.js';
import { GATEWAY_TOKEN_PREFIX } from '../../cloud-wire/protocol.js';

export { GATEWAY_TOKEN_PREFIX };
export const ADMIN_KEY_PREFIX = 'cadm';

/** A table of tokens: id, name, the secret's hash, when made, revoked and by what replaced. */
const tokenTable = (name: string) => `CREATE TABLE ${name} (
         id TEXT PRIMARY KEY,
         name TEXT NOT NULL,
         secret_hash TEXT NOT NULL,
         created_at BIGINT NOT NULL,
         revoked_at BIGINT,
         replaced_by TEXT
       )`;

export const CLOUD_MIGRATIONS: readonly Migration[] = [
  { id: 1, name: 'gateway tokens', up: [tokenTable('cloud_gateway_tokens')] },
  { id: 2, name: 'admin keys', up: [tokenTable('cloud_admin_keys')] },
  {
    id: 3,
    name: 'revocation order',
    up: ['cloud_gateway_tokens', 'cloud_admin_keys'].flatMap((table) => [
      `ALTER TABLE ${table} ADD COLUMN revoked_seq BIGINT`,
      `CREATE INDEX ${table}_revoked_seq ON ${table} (revoked_seq)`,
    ]),
  },
  // Which clouds started on this database (cloud-starts.ts), for npm run cloud-token's warning.
  { id: 4, name: 'cloud starts', up: ['CREATE TABLE cloud_starts (host TEXT PRIMARY KEY, started_at BIGINT NOT NULL)'] },
];

/** A token's record (never its secret). */
export interface GatewayToken {
  id: string;
  name: string;
  createdAt: number;
  revokedAt: number | null;
  replacedBy: string | null;
}

const rowOf = (r: Record<string, unknown>): GatewayToken => ({
  id: String(r.id), name: String(r.name), createdAt: Number(r.created_at), revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
  replacedBy: r.replaced_by === null ? null : String(r.replaced_by),
});

/** Called with a new token's id and whole token before it is committed. */
export type OnMade = (id: string, token: string) => Promise<void>;

const NAME = /^[^\p{Cc}]{1,128}$/u;

/** How long a successful check is remembered: a token another instance or the CLI revokes stops working within this here. */
export const VERIFIED_TTL_MS = 1000;
const VERIFIED_MAX = 10_000;

/**
 * One table of tokens. A check reads it (one row by key), and remembers a
 * success for VERIFIED_TTL_MS (by id, with the secret's hash, so the secret
 * is checked every time), so that a busy MCP client does not cost a database
 * read per call; a token made by the CLI or another instance on the same
 * database counts at once, one revoked there within that second (sooner when
 * `revokedSince` reads it first), and one revoked or rotated in this process
 * at once. Revocations are numbered in commit order (`revoked_seq`), so
 * other instances learn of each one by reading the numbers above the last
 * they saw (core/roles/cloud/revocation-feed.ts).
 */
export class TokenTable {
  private readonly verified = new Map<string, { hash: string; until: number }>();
  /** Tokens this instance revoked and has announced itself, left out of `revokedSince` once. */
  private readonly revokedHere = new Set<string>();

  protected constructor(private readonly db: SqlDatabase, private readonly now: () => number, private readonly table: string, readonly prefix: string) {}

  /**
   * Creates a token; the whole token is in the answer only. `onMade` runs
   * inside the write, before it is committed (the broker client of a
   * gateway token): when it throws, no token is made.
   */
  async create(name: string, onMade?: OnMade): Promise<{ token: string; record: GatewayToken }> {
    if (!NAME.test(name)) throw new Error('name: 1..128 characters, no control characters');
    const made = createBearerToken(this.prefix);
    const record: GatewayToken = { id: made.id, name, createdAt: this.now(), revokedAt: null, replacedBy: null };
    await this.db.write(async (tx) => {
      await tx.run(`INSERT INTO ${this.table} (id, name, secret_hash, created_at, revoked_at, replaced_by) VALUES (?, ?, ?, ?, NULL, NULL)`, [record.id, name, made.hash, record.createdAt]);
      await onMade?.(made.id, made.key);
    }, { transaction: true });
    return { token: made.key, record };
  }

  async list(): Promise<GatewayToken[]> {
    return (await this.db.all(`SELECT id, name, created_at, revoked_at, replaced_by FROM ${this.table} ORDER BY created_at, id`)).map(rowOf);
  }

  /** Whether a token with this id exists and is not revoked. */
  async isValid(id: string): Promise<boolean> {
    return (await this.db.get(`SELECT 1 AS ok FROM ${this.table} WHERE id = ? AND revoked_at IS NULL`, [id])) !== undefined;
  }

  /** Revokes a token; false when it is unknown or revoked already. */
  async revoke(id: string): Promise<boolean> {
    this.verified.delete(id);
    const changed = await this.db.write(async (tx) => {
      const seq = await this.nextRevocation(tx);
      return (await tx.run(`UPDATE ${this.table} SET revoked_at = ?, revoked_seq = ? WHERE id = ? AND revoked_at IS NULL`, [this.now(), seq, id])).changes > 0;
    }, { transaction: true });
    if (changed) this.revokedHere.add(id);
    return changed;
  }

  /**
   * The number of the next revocation: one more than the last, taken under
   * a lock held to the commit, so revocations commit in the order of their
   * numbers on any number of instances and a reader that has seen number n
   * misses none above it (`revokedSince`).
   */
  private async nextRevocation(tx: WriteTx): Promise<number> {
    await tx.lock(`${this.table} revocations`);
    return Number((await tx.get<{ next: number }>(`SELECT COALESCE(MAX(revoked_seq), 0) + 1 AS next FROM ${this.table}`))?.next ?? 1);
  }

  /** The number of the last revocation (0 when none), where a reader of `revokedSince` starts. */
  async lastRevocation(): Promise<number> {
    return Number((await this.db.get<{ last: number | null }>(`SELECT MAX(revoked_seq) AS last FROM ${this.table}`))?.last ?? 0);
  }

  /**
   * The tokens revoked (or rotated) after revocation number `seq`, by any
   * instance or process, in order; each is forgotten by this instance's
   * check at once. Those this instance revoked itself (and announced) are
   * left out. `more`: the limit was reached, read again from `last`.
   */
  async revokedSince(seq: number, limit = 1000): Promise<{ ids: string[]; last: number; more: boolean }> {
    const rows = await this.db.all<{ id: string; revoked_seq: number }>(`SELECT id, revoked_seq FROM ${this.table} WHERE revoked_seq > ? ORDER BY revoked_seq LIMIT ?`, [seq, limit]);
    const ids: string[] = [];
    for (const row of rows) {
      this.verified.delete(row.id);
      if (!this.revokedHere.delete(row.id)) ids.push(row.id);
    }
    return { ids, last: rows.length ? Number(rows.at(-1)?.revoked_seq) : seq, more: rows.length === limit };
  }

  /**
   * A new token under the same name; the old one is revoked in the same
   * transaction. `onMade` runs inside it, before the commit: when it throws,
   * nothing changes and the old token stays valid.
   */
  async rotate(id: string, onMade?: OnMade): Promise<{ token: string; record: GatewayToken } | undefined> {
    this.verified.delete(id);
    const made = createBearerToken(this.prefix);
    const createdAt = this.now();
    const name = await this.db.write(async (tx) => {
      const old = await tx.get<{ name: string }>(`SELECT name FROM ${this.table} WHERE id = ? AND revoked_at IS NULL`, [id]);
      if (!old) return undefined;
      await tx.run(`INSERT INTO ${this.table} (id, name, secret_hash, created_at, revoked_at, replaced_by) VALUES (?, ?, ?, ?, NULL, NULL)`, [made.id, old.name, made.hash, createdAt]);
      await tx.run(`UPDATE ${this.table} SET revoked_at = ?, replaced_by = ?, revoked_seq = ? WHERE id = ?`, [createdAt, made.id, await this.nextRevocation(tx), id]);
      await onMade?.(made.id, made.key);
      return old.name;
    }, { transaction: true });
    if (name === undefined) return undefined;
    this.revokedHere.add(id);
    return { token: made.key, record: { id: made.id, name, createdAt, revokedAt: null, replacedBy: null } };
  }

  /** Told the result of every check (the cloud's metrics). */
  onChecked: ((valid: boolean) => void) | undefined;

  /** The token's id when `token` is a valid token of this table, else undefined. Constant-time on the secret. */
  async verify(token: string | undefined): Promise<string | undefined> {
    const id = await this.check(token);
    this.onChecked?.(id !== undefined);
    return id;
  }

  private async check(token: string | undefined): Promise<string | undefined> {
    if (!token) return undefined;
    const parsed = parseBearerToken(this.prefix, token);
    if (!parsed) return undefined;
    const now = Date.now();
    const known = this.verified.get(parsed.id);
    if (known && known.until > now) return secretMatches(parsed.secret, known.hash) ? parsed.id : undefined;
    const row = await this.db.get<{ secret_hash: string }>(`SELECT secret_hash FROM ${this.table} WHERE id = ? AND revoked_at IS NULL`, [parsed.id]);
    if (!row || !secretMatches(parsed.secret, row.secret_hash)) {
      this.verified.delete(parsed.id);
      return undefined;
    }
    if (this.verified.size >= VERIFIED_MAX) this.verified.clear();
    this.verified.set(parsed.id, { hash: row.secret_hash, until: now + VERIFIED_TTL_MS });
    return parsed.id;
  }
}

/** The gateway tokens (cgw_…). */
export class GatewayTokens extends TokenTable {
  static async open(db: SqlDatabase, now: () => number = Date.now): Promise<GatewayTokens> {
    return new GatewayTokens(db, now, 'cloud_gateway_tokens', GATEWAY_TOKEN_PREFIX);
  }
}

/** The keys of the cloud's admin HTTP interface (cadm_…). */
export class AdminKeys extends TokenTable {
  static async open(db: SqlDatabase, now: () => number = Date.now): Promise<AdminKeys> {
    return new AdminKeys(db, now, 'cloud_admin_keys', ADMIN_KEY_PREFIX);
  }
}
