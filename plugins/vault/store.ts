/**
 * The vault's tables and their repository: libraries, programs, immutable
 * versions (content kept byte-exact as a BLOB with its SHA-256), approvals
 * and their decisions. Portable SQL: no statement here updates a version's
 * number, content, hash or size.
 */
import { numOrNull, strOrNull } from '../../core/store/row-values.js';
import type { SqlDatabase, WriteTx } from '../../core/store/database.js';
import { namesOf, samePerson } from './duties.js';

export { MIGRATIONS } from './schema.js';
export type { ApprovalPolicy, VersionState, ApprovalState, Library, Program, Version, Decision, Approval } from './records.js';
import { libraryOf, programOf, VERSION_COLUMNS, versionOf, type VersionState, type ApprovalState, type Library, type Program, type Version, type Decision, type Approval, type Row } from './records.js';

/** Which libraries a caller sees: all, or the listed ids. */
export type LibraryFilter = '*' | readonly string[];

function scopeClause(column: string, scope: LibraryFilter): { sql: string; params: string[] } {
  if (scope === '*') return { sql: '1 = 1', params: [] };
  if (scope.length === 0) return { sql: '1 = 0', params: [] };
  return { sql: `${column} IN (${scope.map(() => '?').join(', ')})`, params: [...scope] };
}

export class VaultStore {
  constructor(private readonly db: SqlDatabase) {}

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
      'INSERT INTO vault_programs (id, library_id, name, name_key, controller, description, file_name, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [p.id, p.libraryId, p.name, p.name.toLowerCase(), p.controller, p.description, p.fileName, p.createdBy, p.createdAt, p.updatedAt],
    );
  }

  async updateProgram(tx: WriteTx, p: Program): Promise<void> {
    await tx.run('UPDATE vault_programs SET name = ?, name_key = ?, controller = ?, description = ?, file_name = ?, updated_at = ? WHERE id = ?', [
      p.name, p.name.toLowerCase(), p.controller, p.description, p.fileName, p.updatedAt, p.id,
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
      createdAt: Number(r.created_at), decidedAt: numOrNull(r.decided_at),
      decisions: decisions.map((d) => ({ approver: String(d.approver), onBehalfOf: strOrNull(d.on_behalf_of), decision: d.decision as 'approve' | 'reject', comment: String(d.comment), decidedAt: Number(d.decided_at) })),
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
    if (samePerson(namesOf(d.approver, d.onBehalfOf), earlier.flatMap((r) => namesOf(String(r.approver), strOrNull(r.on_behalf_of))))) return false;
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
