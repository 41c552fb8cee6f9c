/**
 * Gateway tokens of the cloud role: `cgw_<id>_<secret>`, shown once, stored
 * as the SHA-256 of the secret (core/auth/bearer-tokens.ts). A token is both
 * the credential a gateway connects to the broker with and what an MCP client
 * sends in `accessToken` to select that gateway (GW-85). Rotating gives a new
 * token for the same gateway (the same id in topics is not kept: the gateway
 * reconnects with the new token); revoking ends it.
 */
import { createBearerToken, parseBearerToken, secretMatches } from '../auth/bearer-tokens.js';
import type { Database } from '../store/database.js';
import type { Migration } from '../store/migrations.js';

export const GATEWAY_TOKEN_PREFIX = 'cgw';

export const CLOUD_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    name: 'gateway tokens',
    up: [
      `CREATE TABLE cloud_gateway_tokens (
         id TEXT PRIMARY KEY,
         name TEXT NOT NULL,
         secret_hash TEXT NOT NULL,
         created_at BIGINT NOT NULL,
         revoked_at BIGINT,
         replaced_by TEXT
       )`,
    ],
  },
];

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

const NAME = /^[^\p{Cc}]{1,128}$/u;

/**
 * The tokens in the database; every check reads it (one row by key), so a
 * token made or revoked by the CLI while the cloud runs counts at once.
 */
export class GatewayTokens {
  private constructor(private readonly db: Database, private readonly now: () => number) {}

  static async open(db: Database, now: () => number = Date.now): Promise<GatewayTokens> {
    return new GatewayTokens(db, now);
  }

  /** Creates a token for a gateway; the whole token is in the answer only. */
  async create(name: string): Promise<{ token: string; record: GatewayToken }> {
    if (!NAME.test(name)) throw new Error('name: 1..128 characters, no control characters');
    const made = createBearerToken(GATEWAY_TOKEN_PREFIX);
    const record: GatewayToken = { id: made.id, name, createdAt: this.now(), revokedAt: null, replacedBy: null };
    await this.db.write((tx) => tx.run('INSERT INTO cloud_gateway_tokens (id, name, secret_hash, created_at, revoked_at, replaced_by) VALUES (?, ?, ?, ?, NULL, NULL)', [record.id, name, made.hash, record.createdAt]));
    return { token: made.key, record };
  }

  async list(): Promise<GatewayToken[]> {
    return (await this.db.all('SELECT id, name, created_at, revoked_at, replaced_by FROM cloud_gateway_tokens ORDER BY created_at, id')).map(rowOf);
  }

  /** Revokes a token; false when it is unknown or revoked already. */
  async revoke(id: string): Promise<boolean> {
    const result = await this.db.write((tx) => tx.run('UPDATE cloud_gateway_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [this.now(), id]));
    return result.changes > 0;
  }

  /** A new token for the same gateway name; the old one is revoked. */
  async rotate(id: string): Promise<{ token: string; record: GatewayToken } | undefined> {
    const old = (await this.list()).find((t) => t.id === id && t.revokedAt === null);
    if (!old) return undefined;
    const next = await this.create(old.name);
    await this.db.write((tx) => tx.run('UPDATE cloud_gateway_tokens SET revoked_at = ?, replaced_by = ? WHERE id = ?', [this.now(), next.record.id, id]));
    return next;
  }

  /** The token's id when `token` is a valid gateway token, else undefined. Constant-time on the secret. */
  async verify(token: string | undefined): Promise<string | undefined> {
    if (!token) return undefined;
    const parsed = parseBearerToken(GATEWAY_TOKEN_PREFIX, token);
    if (!parsed) return undefined;
    const row = await this.db.get<{ secret_hash: string }>('SELECT secret_hash FROM cloud_gateway_tokens WHERE id = ? AND revoked_at IS NULL', [parsed.id]);
    return row && secretMatches(parsed.secret, row.secret_hash) ? parsed.id : undefined;
  }
}
