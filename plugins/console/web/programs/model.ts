/** What the programs, approvals and deploy views read from /api/v1, and how they word a failure. */
import { ProblemError } from './api.js';

export interface Page<T> { items: T[] }
export interface Library { id: string; name: string }
export interface Program { id: string; name: string; libraryId: string; controller: string }
export interface Version { id: string; number: number; state: string; author: string; notes: string; sha256: string; size: number; createdAt: string }
export interface Approval { id: string; versionId: string; programId: string; versionNumber: number; state: string; required: number; approvals: number; excluded: string[]; createdBy: string; createdAt: string }
export interface Assignment { id: string; programId: string; machineId: string | null; groupId: string | null; dir: string }
export interface Deployment { id: string; machineId: string; status: string; reason: string | null; batchId: string }
export interface Machine { id: string; machineId: string; name: string; groupIds?: string[] }

export const message = (err: unknown) => (err instanceof ProblemError ? err.message : 'The service could not be reached.');
