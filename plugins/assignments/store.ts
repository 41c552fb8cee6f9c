/** The assignments' table: an assignment never changes once made. */
import type { Migration } from '../../core/store/migrations.js';
import { transformSchema, type Transform } from './transform.js';

export const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    name: 'machine assignments',
    up: [
      `CREATE TABLE assignments (
         id TEXT PRIMARY KEY,
         program_id TEXT NOT NULL,
         target_kind TEXT NOT NULL,
         target_id TEXT NOT NULL,
         dir TEXT NOT NULL,
         transform TEXT NOT NULL,
         created_by TEXT NOT NULL,
         created_at BIGINT NOT NULL,
         updated_at BIGINT NOT NULL,
         UNIQUE (program_id, target_kind, target_id)
       )`,
    ],
  },
];

export interface Assignment {
  id: string;
  programId: string;
  targetKind: 'machine' | 'group';
  targetId: string;
  dir: string;
  transform: Transform;
  createdBy: string;
  createdAt: number;
  updatedAt: number;
}

/** An assignment as its row stores it. */
export const rowOf = (r: Record<string, unknown>): Assignment => ({
  id: String(r.id), programId: String(r.program_id), targetKind: r.target_kind as Assignment['targetKind'], targetId: String(r.target_id), dir: String(r.dir),
  transform: transformSchema.parse(JSON.parse(String(r.transform))), createdBy: String(r.created_by), createdAt: Number(r.created_at), updatedAt: Number(r.updated_at),
});
