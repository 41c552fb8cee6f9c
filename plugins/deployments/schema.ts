/** The deployments' tables: batches, deployments with their actor snapshots, releases and the content sent. */
import type { Migration } from '../../core/store/migrations.js';

export const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    name: 'batches and deployments',
    up: [
      `CREATE TABLE deploy_batches (
         id TEXT PRIMARY KEY,
         version_id TEXT NOT NULL,
         is_trial INTEGER NOT NULL,
         trial_hours REAL,
         idempotency_key TEXT UNIQUE,
         request_hash TEXT NOT NULL,
         answer TEXT NOT NULL,
         created_by TEXT NOT NULL,
         created_at BIGINT NOT NULL
       )`,
      // What machines get, kept once per content: a batch to a group usually sends one file to every machine.
      `CREATE TABLE deploy_contents (
         sha256 TEXT PRIMARY KEY,
         content BLOB NOT NULL
       )`,
      `CREATE TABLE deploy_deployments (
         id TEXT PRIMARY KEY,
         batch_id TEXT NOT NULL REFERENCES deploy_batches(id),
         assignment_id TEXT NOT NULL,
         machine_id TEXT NOT NULL,
         gateway_id TEXT NOT NULL,
         version_id TEXT NOT NULL,
         dir TEXT NOT NULL,
         file_name TEXT NOT NULL,
         sha256 TEXT NOT NULL REFERENCES deploy_contents(sha256),
         size INTEGER NOT NULL,
         status TEXT NOT NULL,
         reason TEXT,
         transfers INTEGER NOT NULL,
         read_back_sha256 TEXT,
         timeline TEXT NOT NULL,
         snapshot TEXT,
         machine_version INTEGER NOT NULL,
         deadline BIGINT NOT NULL,
         created_by TEXT NOT NULL,
         created_at BIGINT NOT NULL,
         updated_at BIGINT NOT NULL,
         finished_at BIGINT
       )`,
      'CREATE INDEX deploy_deployments_batch ON deploy_deployments(batch_id)',
      'CREATE INDEX deploy_deployments_status ON deploy_deployments(status)',
    ],
  },
  {
    id: 2,
    name: 'deployment purposes and releases',
    up: [
      // Why a deployment was made: a release (deploy), a trial, or the service putting a file back (pull-back, drift-reject, restore).
      // Those made by the service may have no version (a restored snapshot) or no assignment: stored as '' and shown as null.
      "ALTER TABLE deploy_deployments ADD COLUMN purpose TEXT NOT NULL DEFAULT 'deploy'",
      'CREATE INDEX deploy_deployments_machine ON deploy_deployments(machine_id, created_at)',
      // What each assignment releases to each machine: the last release deployment that succeeded, or a promoted trial.
      `CREATE TABLE deploy_releases (
         assignment_id TEXT NOT NULL,
         machine_id TEXT NOT NULL,
         version_id TEXT NOT NULL,
         sha256 TEXT NOT NULL REFERENCES deploy_contents(sha256),
         dir TEXT NOT NULL,
         file_name TEXT NOT NULL,
         deployment_id TEXT NOT NULL,
         released_at BIGINT NOT NULL,
         released_by TEXT NOT NULL,
         PRIMARY KEY (assignment_id, machine_id)
       )`,
      'CREATE INDEX deploy_releases_machine ON deploy_releases(machine_id)',
    ],
  },
];

/** The lease of the instance that drives each deployment and trial (plugins/deployments/lease.ts); after the trials' migration, so the ids are 4 to 6. */
export const LEASE_MIGRATIONS: readonly Migration[] = [
  {
    id: 4,
    name: 'deployment leases',
    up: [
      // Rows written before leases have no holder: the first instance that looks claims them.
      'ALTER TABLE deploy_deployments ADD COLUMN holder TEXT',
      'ALTER TABLE deploy_deployments ADD COLUMN lease_until BIGINT',
      'CREATE INDEX deploy_deployments_lease ON deploy_deployments(lease_until) WHERE finished_at IS NULL',
    ],
  },
  {
    id: 5,
    name: 'trial leases and decisions',
    up: [
      // Trials written before leases have no holder: the first instance that looks claims them.
      'ALTER TABLE deploy_trials ADD COLUMN holder TEXT',
      'ALTER TABLE deploy_trials ADD COLUMN lease_until BIGINT',
      // A promote or pull-back received by an instance that does not hold the trial, for its holder to carry out (JSON).
      'ALTER TABLE deploy_trials ADD COLUMN pending_decision TEXT',
      'CREATE INDEX deploy_trials_lease ON deploy_trials(lease_until) WHERE finished_at IS NULL',
      'CREATE INDEX deploy_trials_pending ON deploy_trials(holder) WHERE pending_decision IS NOT NULL',
    ],
  },
  {
    id: 6,
    name: 'lease epochs',
    up: [
      // Grows at every claim: each step of a deployment is stored, and each transfer made, under the epoch its holder claimed it with.
      // Rows written before epochs start at 0; the next claim makes them 1.
      'ALTER TABLE deploy_deployments ADD COLUMN lease_epoch BIGINT NOT NULL DEFAULT 0',
      'ALTER TABLE deploy_trials ADD COLUMN lease_epoch BIGINT NOT NULL DEFAULT 0',
    ],
  },
];

/** Each batch's trace (docs/tracing.md, "A deployment's trace"); after the leases' migrations, so its id is 7. */
export const TRACE_MIGRATIONS: readonly Migration[] = [
  {
    id: 7,
    name: 'deployment trace context',
    up: [
      // The W3C trace context (traceparent, tracestate) of the batch's span: each deployment's steps continue it, on whichever
      // instance runs them. NULL when tracing was off at the batch's creation (or for rows written before this).
      'ALTER TABLE deploy_batches ADD COLUMN trace_parent TEXT',
      'ALTER TABLE deploy_batches ADD COLUMN trace_state TEXT',
      'ALTER TABLE deploy_deployments ADD COLUMN trace_parent TEXT',
      'ALTER TABLE deploy_deployments ADD COLUMN trace_state TEXT',
    ],
  },
];
