/** The mirror's tables: machine files, content-addressed snapshots, per-machine read state and drift items. */
import type { Migration } from '../../core/store/migrations.js';

export const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    name: 'mirror files, snapshots, machines, drift',
    up: [
      `CREATE TABLE mirror_contents (
         sha256 TEXT PRIMARY KEY,
         content BLOB NOT NULL
       )`,
      `CREATE TABLE mirror_files (
         id TEXT PRIMARY KEY,
         machine_id TEXT NOT NULL,
         dir TEXT NOT NULL,
         name TEXT NOT NULL,
         sha256 TEXT,
         size INTEGER,
         present INTEGER NOT NULL,
         first_seen_at BIGINT NOT NULL,
         last_seen_at BIGINT,
         gone_at BIGINT,
         adopted_program_id TEXT,
         UNIQUE (machine_id, dir, name)
       )`,
      `CREATE TABLE mirror_snapshots (
         id TEXT PRIMARY KEY,
         file_id TEXT NOT NULL REFERENCES mirror_files(id),
         sha256 TEXT NOT NULL REFERENCES mirror_contents(sha256),
         size INTEGER NOT NULL,
         taken_at BIGINT NOT NULL,
         trigger TEXT NOT NULL
       )`,
      'CREATE INDEX mirror_snapshots_file ON mirror_snapshots(file_id, taken_at)',
      `CREATE TABLE mirror_machines (
         machine_id TEXT PRIMARY KEY,
         last_run_at BIGINT,
         last_ok_at BIGINT,
         last_error TEXT,
         last_error_at BIGINT,
         files INTEGER NOT NULL,
         running TEXT
       )`,
      `CREATE TABLE mirror_drift (
         id TEXT PRIMARY KEY,
         file_id TEXT NOT NULL REFERENCES mirror_files(id),
         machine_id TEXT NOT NULL,
         assignment_id TEXT NOT NULL,
         expected_source TEXT NOT NULL,
         expected_version_id TEXT NOT NULL,
         expected_sha256 TEXT NOT NULL,
         found_sha256 TEXT,
         snapshot_id TEXT,
         status TEXT NOT NULL,
         opened_at BIGINT NOT NULL,
         updated_at BIGINT NOT NULL,
         decided_by TEXT,
         decided_at BIGINT,
         note TEXT,
         result_version_id TEXT,
         result_deployment_id TEXT
       )`,
      'CREATE INDEX mirror_drift_status ON mirror_drift(status, opened_at)',
      'CREATE INDEX mirror_drift_file ON mirror_drift(file_id)',
    ],
  },
  {
    id: 2,
    name: 'mirror read claims',
    up: [
      // The instance reading a machine on its interval, until when (plugins/mirror/store.ts, claimRead).
      'ALTER TABLE mirror_machines ADD COLUMN reader TEXT',
      'ALTER TABLE mirror_machines ADD COLUMN read_until BIGINT',
    ],
  },
];
