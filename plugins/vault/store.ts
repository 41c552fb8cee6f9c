/**
 * The vault's tables and their repository: libraries, programs, immutable
 * versions (content kept byte-exact as a BLOB with its SHA-256), approvals
 * and their decisions. Portable SQL: no statement here updates a version's
 * number, content, hash or size.
 */
import { randomBytes } from 'node:crypto';
import type { Migration } from '../../core/store/migrations.js';
import type { Database, WriteTx } from '../../core/store/database.js';
import { namesOf, samePerson } from './duties.js';

export const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    name: 'libraries, programs, versions, approvals',
    up: [
      `CREATE TABLE vault_libraries (
         id TEXT PRIMARY KEY,
         name TEXT NOT NULL,
         name_key TEXT NOT NULL UNIQUE,
         description TEXT NOT NULL,
         policy_mode TEXT NOT NULL,
         approvals_required INTEGER NOT NULL,
         approvers TEXT NOT NULL,
         created_by TEXT NOT NULL,
         created_at BIGINT NOT NULL
       )`,
      `CREATE TABLE vault_programs (
         id TEXT PRIMARY KEY,
         library_id TEXT NOT NULL REFERENCES vault_libraries(id),
         name TEXT NOT NULL,
         name_key TEXT NOT NULL,
         controller TEXT NOT NULL,
         description TEXT NOT NULL,
         created_by TEXT NOT NULL,
         created_at BIGINT NOT NULL,
         updated_at BIGINT NOT NULL,
         UNIQUE (library_id, name_key)
       )`,
      `CREATE TABLE vault_versions (
         id TEXT PRIMARY KEY,
         program_id TEXT NOT NULL REFERENCES vault_programs(id),
         number INTEGER NOT NULL,
         sha256 TEXT NOT NULL,
         size INTEGER NOT NULL,
         content BLOB NOT NULL,
         notes TEXT NOT NULL,
         author TEXT NOT NULL,
         state TEXT NOT NULL,
         created_at BIGINT NOT NULL,
         submitted_at BIGINT,
         submitted_by TEXT,
         published_at BIGINT,
         obsoleted_at BIGINT,
         obsoleted_by TEXT,
         UNIQUE (program_id, number)
       )`,
      `CREATE TABLE vault_approvals (
         id TEXT PRIMARY KEY,
         version_id TEXT NOT NULL REFERENCES vault_versions(id),
         state TEXT NOT NULL,
         required INTEGER NOT NULL,
         created_by TEXT NOT NULL,
         created_at BIGINT NOT NULL,
         decided_at BIGINT
       )`,
      'CREATE INDEX vault_approvals_version ON vault_approvals(version_id)',
      `CREATE TABLE vault_decisions (
         approval_id TEXT NOT NULL REFERENCES vault_approvals(id),
         approver TEXT NOT NULL,
         decision TEXT NOT NULL,
         comment TEXT NOT NULL,
         decided_at BIGINT NOT NULL,
         PRIMARY KEY (approval_id, approver)
       )`,
    ],
  },
  {
    id: 2,
    name: 'operators declared at upload, submission and decision',
    up: [
      'ALTER TABLE vault_versions ADD COLUMN author_operator TEXT',
      'ALTER TABLE vault_versions ADD COLUMN submitted_operator TEXT',
      'ALTER TABLE vault_decisions ADD COLUMN on_behalf_of TEXT',
    ],
  },
];

export type ApprovalPolicy = { mode: 'autoRelease' } | { mode: 'approvals'; required: number };
export type VersionState = 'draft' | 'submitted' | 'published' | 'obsolete';
export type ApprovalState = 'pending' | 'approved' | 'rejected' | 'cancelled';

export interface Library {
  id: string;
  name: string;
  description: string;
  policy: ApprovalPolicy;
  approvers: string[];
  createdBy: string;
  createdAt: number;
}

export interface Program {
  id: string;
  libraryId: string;
  name: string;
  controller: string;
  description: string;
  createdBy: string;
  createdAt: number;
  updatedAt: number;
}

export interface Version {
  id: string;
  programId: string;
  number: number;
  sha256: string;
  size: number;
  notes: string;
  author: string;
  /** The operator the uploader declared with X-On-Behalf-Of, or null. */
  authorOperator: string | null;
  state: VersionState;
  createdAt: number;
  submittedAt: number | null;
  submittedBy: string | null;
  /** The operator the submitter declared, or null. */
  submittedOperator: string | null;
  publishedAt: number | null;
  obsoletedAt: number | null;
  obsoletedBy: string | null;
}

export interface Decision {
  approver: string;
  /** The operator the approver declared, or null. */
  onBehalfOf: string | null;
  decision: 'approve' | 'reject';
  comment: string;
  decidedAt: number;
}

export interface Approval {
  id: string;
  versionId: string;
  state: ApprovalState;
  required: number;
  createdBy: string;
  createdAt: number;
  decidedAt: number | null;
  decisions: Decision[];
}

type Row = Record<string, unknown>;
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}

function libraryOf(r: Row): Library {
  const policy: ApprovalPolicy = r.policy_mode === 'autoRelease' ? { mode: 'autoRelease' } : { mode: 'approvals', required: Number(r.approvals_required) };
  return {
    id: String(r.id), name: String(r.name), description: String(r.description), policy, approvers: JSON.parse(String(r.approvers)) as string[],
    createdBy: String(r.created_by), createdAt: Number(r.created_at),
  };
}

function programOf(r: Row): Program {
  return {
    id: String(r.id), libraryId: String(r.library_id), name: String(r.name), controller: String(r.controller), description: String(r.description),
    createdBy: String(r.created_by), createdAt: Number(r.created_at), updatedAt: Number(r.updated_at),
  };
}

const VERSION_COLUMNS = 'id, program_id, number, sha256, size, notes, author, author_operator, state, created_at, submitted_at, submitted_by, submitted_operator, published_at, obsoleted_at, obsoleted_by';

function versionOf(r: Row): Version {
  return {
    id: String(r.id), programId: String(r.program_id), number: Number(r.number), sha256: String(r.sha256), size: Number(r.size), notes: String(r.notes),
    author: String(r.author), authorOperator: str(r.author_operator), state: r.state as VersionState, createdAt: Number(r.created_at), submittedAt: num(r.submitted_at),
    submittedBy: str(r.submitted_by), submittedOperator: str(r.submitted_operator), publishedAt: num(r.published_at), obsoletedAt: num(r.obsoleted_at), obsoletedBy: str(r.obsoleted_by),
  };
}

/** Which libraries a caller sees: all, or the listed ids. */
export type LibraryFilter = '*' | readonly string[];

function scopeClause(column: string, scope: LibraryFilter): { sql: string; params: string[] } {
  if (scope === '*') return { sql: '1 = 1', params: [] };
  if (scope.length === 0) return { sql: '1 = 0', params: [] };
  return { sql: `${column} IN (${scope.map(() => '?').join(', ')})`, params: [...scope] };
}

export class VaultStore {
  constructor(private readonly db: Database) {}

  async library(id: string): Promise<Library | undefined> {
    const r = await this.db.get('SELECT * FROM vault_libraries WHERE id = ?', [id]);
    return r ? libraryOf(r) : undefined;
  }

  async libraryByName(name: string): Promise<Library | undefined> {
    const r = await this.db.get('SELECT * FROM vault_libraries WHERE name_key = ?', [name.toLowerCase()]);
    return r ? libraryOf(r) : undefined;
  }

  async listLibraries(scope: LibraryFilter, limit: number, afterId: string | null): Promise<Library[]> {
    const s = scopeClause('id', scope);
    const rows = await this.db.all(`SELECT * FROM vault_libraries WHERE ${s.sql} AND id > ? ORDER BY id LIMIT ?`, [...s.params, afterId ?? '', limit]);
    return rows.map(libraryOf);
  }

  async insertLibrary(tx: WriteTx, l: Library): Promise<void> {
    await tx.run(
      'INSERT INTO vault_libraries (id, name, name_key, description, policy_mode, approvals_required, approvers, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [l.id, l.name, l.name.toLowerCase(), l.description, l.policy.mode, l.policy.mode === 'approvals' ? l.policy.required : 0, JSON.stringify(l.approvers), l.createdBy, l.createdAt],
    );
  }

  async program(id: string): Promise<Program | undefined> {
    const r = await this.db.get('SELECT * FROM vault_programs WHERE id = ?', [id]);
    return r ? programOf(r) : undefined;
  }

  async programByName(libraryId: string, name: string): Promise<Program | undefined> {
    const r = await this.db.get('SELECT * FROM vault_programs WHERE library_id = ? AND name_key = ?', [libraryId, name.toLowerCase()]);
    return r ? programOf(r) : undefined;
  }

  async listPrograms(scope: LibraryFilter, libraryId: string | undefined, limit: number, afterId: string | null): Promise<Program[]> {
    const s = scopeClause('library_id', scope);
    const byLibrary = libraryId ? ' AND library_id = ?' : '';
    const rows = await this.db.all(`SELECT * FROM vault_programs WHERE ${s.sql}${byLibrary} AND id > ? ORDER BY id LIMIT ?`, [
      ...s.params, ...(libraryId ? [libraryId] : []), afterId ?? '', limit,
    ]);
    return rows.map(programOf);
  }

  async insertProgram(tx: WriteTx, p: Program): Promise<void> {
    await tx.run(
      'INSERT INTO vault_programs (id, library_id, name, name_key, controller, description, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [p.id, p.libraryId, p.name, p.name.toLowerCase(), p.controller, p.description, p.createdBy, p.createdAt, p.updatedAt],
    );
  }

  async updateProgram(tx: WriteTx, p: Program): Promise<void> {
    await tx.run('UPDATE vault_programs SET name = ?, name_key = ?, controller = ?, description = ?, updated_at = ? WHERE id = ?', [
      p.name, p.name.toLowerCase(), p.controller, p.description, p.updatedAt, p.id,
    ]);
  }

  /** Deletes a program with its versions and their approvals (the caller checked none is published). */
  async deleteProgram(tx: WriteTx, id: string): Promise<void> {
    const inVersions = 'SELECT id FROM vault_versions WHERE program_id = ?';
    await tx.run(`DELETE FROM vault_decisions WHERE approval_id IN (SELECT id FROM vault_approvals WHERE version_id IN (${inVersions}))`, [id]);
    await tx.run(`DELETE FROM vault_approvals WHERE version_id IN (${inVersions})`, [id]);
    await tx.run('DELETE FROM vault_versions WHERE program_id = ?', [id]);
    await tx.run('DELETE FROM vault_programs WHERE id = ?', [id]);
  }

  async version(id: string): Promise<Version | undefined> {
    const r = await this.db.get(`SELECT ${VERSION_COLUMNS} FROM vault_versions WHERE id = ?`, [id]);
    return r ? versionOf(r) : undefined;
  }

  async versionIn(tx: WriteTx, id: string): Promise<Version | undefined> {
    const r = await tx.get(`SELECT ${VERSION_COLUMNS} FROM vault_versions WHERE id = ?`, [id]);
    return r ? versionOf(r) : undefined;
  }

  async content(id: string): Promise<Buffer | undefined> {
    const r = await this.db.get<{ content: Buffer }>('SELECT content FROM vault_versions WHERE id = ?', [id]);
    return r?.content;
  }

  /** Versions of a program, newest (highest number) first, below `beforeNumber`. */
  async listVersions(programId: string, state: VersionState | undefined, limit: number, beforeNumber: number | null): Promise<Version[]> {
    const rows = await this.db.all(
      `SELECT ${VERSION_COLUMNS} FROM vault_versions WHERE program_id = ? AND number < ?${state ? ' AND state = ?' : ''} ORDER BY number DESC LIMIT ?`,
      [programId, beforeNumber ?? Number.MAX_SAFE_INTEGER, ...(state ? [state] : []), limit],
    );
    return rows.map(versionOf);
  }

  async countPublished(programId: string): Promise<number> {
    const r = await this.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM vault_versions WHERE program_id = ? AND state = 'published'", [programId]);
    return Number(r?.n ?? 0);
  }

  /** Inserts a version with the next number of its program, inside the caller's transaction; returns the number. */
  async insertVersion(tx: WriteTx, v: Omit<Version, 'number'>, content: Buffer): Promise<number> {
    const r = await tx.get<{ n: number | null }>('SELECT MAX(number) AS n FROM vault_versions WHERE program_id = ?', [v.programId]);
    const number = Number(r?.n ?? 0) + 1;
    await tx.run(
      `INSERT INTO vault_versions (id, program_id, number, sha256, size, content, notes, author, author_operator, state, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [v.id, v.programId, number, v.sha256, v.size, content, v.notes, v.author, v.authorOperator, v.state, v.createdAt],
    );
    return number;
  }

  /** Moves a version from `from` to `to` with the given times; false when its state was not `from` (a concurrent change). */
  async transition(tx: WriteTx, id: string, from: readonly VersionState[], to: VersionState, set: Partial<Pick<Version, 'submittedAt' | 'submittedBy' | 'submittedOperator' | 'publishedAt' | 'obsoletedAt' | 'obsoletedBy'>> = {}): Promise<boolean> {
    const columns: Record<string, string> = { submittedAt: 'submitted_at', submittedBy: 'submitted_by', submittedOperator: 'submitted_operator', publishedAt: 'published_at', obsoletedAt: 'obsoleted_at', obsoletedBy: 'obsoleted_by' };
    const entries = Object.entries(set);
    const assignments = ['state = ?', ...entries.map(([k]) => `${columns[k]} = ?`)].join(', ');
    const result = await tx.run(`UPDATE vault_versions SET ${assignments} WHERE id = ? AND state IN (${from.map(() => '?').join(', ')})`, [
      to, ...entries.map(([, v]) => v as string | number | null), id, ...from,
    ]);
    return result.changes === 1;
  }

  async approval(id: string): Promise<Approval | undefined> {
    const r = await this.db.get('SELECT * FROM vault_approvals WHERE id = ?', [id]);
    return r ? this.withDecisions(r) : undefined;
  }

  async openApprovalOf(versionId: string): Promise<Approval | undefined> {
    const r = await this.db.get("SELECT * FROM vault_approvals WHERE version_id = ? AND state = 'pending'", [versionId]);
    return r ? this.withDecisions(r) : undefined;
  }

  private async withDecisions(r: Row): Promise<Approval> {
    const decisions = await this.db.all('SELECT approver, on_behalf_of, decision, comment, decided_at FROM vault_decisions WHERE approval_id = ? ORDER BY decided_at, approver', [String(r.id)]);
    return {
      id: String(r.id), versionId: String(r.version_id), state: r.state as ApprovalState, required: Number(r.required), createdBy: String(r.created_by),
      createdAt: Number(r.created_at), decidedAt: num(r.decided_at),
      decisions: decisions.map((d) => ({ approver: String(d.approver), onBehalfOf: str(d.on_behalf_of), decision: d.decision as 'approve' | 'reject', comment: String(d.comment), decidedAt: Number(d.decided_at) })),
    };
  }

  /** Approvals visible in `scope`, newest first (by id order of creation time then id). */
  async listApprovals(scope: LibraryFilter, state: ApprovalState | undefined, libraryId: string | undefined, limit: number, after: { createdAt: number; id: string } | null): Promise<Approval[]> {
    const s = scopeClause('p.library_id', scope);
    const params: (string | number)[] = [...s.params];
    let where = s.sql;
    if (state) {
      where += ' AND a.state = ?';
      params.push(state);
    }
    if (libraryId) {
      where += ' AND p.library_id = ?';
      params.push(libraryId);
    }
    if (after) {
      where += ' AND (a.created_at < ? OR (a.created_at = ? AND a.id < ?))';
      params.push(after.createdAt, after.createdAt, after.id);
    }
    const rows = await this.db.all(
      `SELECT a.* FROM vault_approvals a JOIN vault_versions v ON v.id = a.version_id JOIN vault_programs p ON p.id = v.program_id WHERE ${where} ORDER BY a.created_at DESC, a.id DESC LIMIT ?`,
      [...params, limit],
    );
    return Promise.all(rows.map((r) => this.withDecisions(r)));
  }

  async insertApproval(tx: WriteTx, a: Omit<Approval, 'decisions'>): Promise<void> {
    await tx.run('INSERT INTO vault_approvals (id, version_id, state, required, created_by, created_at, decided_at) VALUES (?, ?, ?, ?, ?, ?, NULL)', [
      a.id, a.versionId, a.state, a.required, a.createdBy, a.createdAt,
    ]);
  }

  /** Records a decision; false when a person it names (the approver or its operator) already decided, read inside the transaction. */
  async insertDecision(tx: WriteTx, approvalId: string, d: Decision): Promise<boolean> {
    const earlier = await tx.all('SELECT approver, on_behalf_of FROM vault_decisions WHERE approval_id = ?', [approvalId]);
    if (samePerson(namesOf(d.approver, d.onBehalfOf), earlier.flatMap((r) => namesOf(String(r.approver), str(r.on_behalf_of))))) return false;
    await tx.run('INSERT INTO vault_decisions (approval_id, approver, on_behalf_of, decision, comment, decided_at) VALUES (?, ?, ?, ?, ?, ?)', [
      approvalId, d.approver, d.onBehalfOf, d.decision, d.comment, d.decidedAt,
    ]);
    return true;
  }

  async countApprovals(tx: WriteTx, approvalId: string): Promise<number> {
    const r = await tx.get<{ n: number }>("SELECT COUNT(*) AS n FROM vault_decisions WHERE approval_id = ? AND decision = 'approve'", [approvalId]);
    return Number(r?.n ?? 0);
  }

  async countPendingApprovals(): Promise<number> {
    return Number((await this.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM vault_approvals WHERE state = 'pending'"))?.n ?? 0);
  }

  /** Ends a pending approval; false when it was no longer pending. */
  async closeApproval(tx: WriteTx, id: string, state: Exclude<ApprovalState, 'pending'>, at: number): Promise<boolean> {
    const result = await tx.run("UPDATE vault_approvals SET state = ?, decided_at = ? WHERE id = ? AND state = 'pending'", [state, at, id]);
    return result.changes === 1;
  }
}
