/** What the vault's tables hold, as records: libraries, programs, versions, approvals and their decisions. */
import { defaultFileName } from '../../core/roles/programs/file-name-template.js';
import { numOrNull, strOrNull } from '../../core/store/row-values.js';

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
  /** The file name its assignments give the machine unless they name their own: a template (`O1234`, `{program}`). */
  fileName: string;
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

export type Row = Record<string, unknown>;

/** A library as its row stores it. */
export function libraryOf(r: Row): Library {
  const policy: ApprovalPolicy = r.policy_mode === 'autoRelease' ? { mode: 'autoRelease' } : { mode: 'approvals', required: Number(r.approvals_required) };
  return {
    id: String(r.id), name: String(r.name), description: String(r.description), policy, approvers: JSON.parse(String(r.approvers)) as string[],
    createdBy: String(r.created_by), createdAt: Number(r.created_at),
  };
}

/** A program as its row stores it. */
export function programOf(r: Row): Program {
  return {
    id: String(r.id), libraryId: String(r.library_id), name: String(r.name), controller: String(r.controller), description: String(r.description),
    fileName: strOrNull(r.file_name) ?? defaultFileName(String(r.name)),
    createdBy: String(r.created_by), createdAt: Number(r.created_at), updatedAt: Number(r.updated_at),
  };
}

/** The columns of a version's row (never its content). */
export const VERSION_COLUMNS = 'id, program_id, number, sha256, size, notes, author, author_operator, state, created_at, submitted_at, submitted_by, submitted_operator, published_at, obsoleted_at, obsoleted_by';

/** A version as its row stores it. */
export function versionOf(r: Row): Version {
  return {
    id: String(r.id), programId: String(r.program_id), number: Number(r.number), sha256: String(r.sha256), size: Number(r.size), notes: String(r.notes),
    author: String(r.author), authorOperator: strOrNull(r.author_operator), state: r.state as VersionState, createdAt: Number(r.created_at), submittedAt: numOrNull(r.submitted_at),
    submittedBy: strOrNull(r.submitted_by), submittedOperator: strOrNull(r.submitted_operator), publishedAt: numOrNull(r.published_at), obsoletedAt: numOrNull(r.obsoleted_at), obsoletedBy: strOrNull(r.obsoleted_by),
  };
}

