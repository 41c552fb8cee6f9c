/** The vault's tables: libraries, programs, versions with their content, approvals and decisions. */
import type { Migration } from '../../core/store/migrations.js';

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
  {
    id: 3,
    name: "a program's file name on its machines",
    // NULL for a program made before: its file name comes from its name (defaultFileName).
    up: ['ALTER TABLE vault_programs ADD COLUMN file_name TEXT'],
  },
];
