/** What the programs, approvals and deploy views read from /api/v1, and how they word a failure. */
import { useEffect, useState } from 'preact/hooks';
import { ProblemError } from './api.js';

export interface Page<T> { items: T[] }
export interface Library { id: string; name: string; approvalPolicy?: { mode: 'autoRelease' } | { mode: 'approvals'; required: number } }
export interface Program { id: string; name: string; libraryId: string; controller: string; fileName: string }
export interface Version { id: string; programId: string; number: number; state: string; author: string; notes: string; sha256: string; size: number; createdAt: string }
export interface Transform { fileName: string; programNumber?: number; header: string[]; footer: string[]; substitutions: { from: string; to: string }[]; lineEnding: string }
export interface Approval { id: string; versionId: string; programId: string; versionNumber: number; state: string; required: number; approvals: number; excluded: string[]; createdBy: string; createdAt: string }
export interface Assignment { id: string; programId: string; machineId: string | null; groupId: string | null; dir: string; transform: Transform }
export interface Deployment { id: string; machineId: string; versionId: string | null; status: string; reason: string | null; batchId: string; waitingForSlot?: boolean; purpose?: string }
export interface Machine { id: string; machineId: string; name: string; groupIds?: string[]; programDir?: string; present?: boolean }
export interface Group { id: string; name: string; machineIds: string[] }

export const message = (err: unknown) => (err instanceof ProblemError ? err.message : 'The service could not be reached.');

/** Whether the role may use an operation that needs `permission`: a button it cannot use is not offered. */
export const may = (me: { permissions: string[] }, permission: string) => me.permissions.includes(permission);

/** Sorted by name as people read them (numbers in order: Mill 2 before Mill 10). */
export const byName = <T extends { name: string }>(list: readonly T[]): T[] => [...list].sort((a, b) => a.name.localeCompare(b.name, undefined, { numeric: true, sensitivity: 'base' }));

/** A deployment's status in plant words: one waiting for a transfer slot says so instead of "Transferring". */
export const statusWords = (d: { status: string; waitingForSlot?: boolean }) => (d.status === 'Transferring' && d.waitingForSlot ? 'waiting for a transfer slot' : d.status);

/** Reads every machine (names for ids), by service id. */
export async function machineMap(get: <T>(path: string) => Promise<T>): Promise<Map<string, Machine>> {
  return new Map((await get<Page<Machine>>('/machines?limit=1000')).items.map((m) => [m.id, m]));
}

export const when = (s: string | null) => (s ? new Date(s).toLocaleString() : '—');

/** Loads once (and when `deps` change): the data, the error in words, and a reload. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []): [T | null, string | null, () => Promise<void>] {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reload = async () => {
    try {
      setData(await load());
      setError(null);
    } catch (err) {
      setError(message(err));
    }
  };
  useEffect(() => void reload(), deps);
  return [data, error, reload];
}

