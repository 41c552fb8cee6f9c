/** What the deployments' tables hold, as records: deployments, their timelines and releases. */
import type { DeploymentStatus } from './machine.js';
import { carrierOf, type TraceCarrier } from './trace.js';

/** Why a deployment was made. */
export const DEPLOYMENT_PURPOSES = ['deploy', 'trial', 'pull-back', 'drift-reject', 'restore'] as const;
export type DeploymentPurpose = (typeof DEPLOYMENT_PURPOSES)[number];

/** What an assignment releases to a machine. */
export interface Release {
  assignmentId: string;
  machineId: string;
  versionId: string;
  sha256: string;
  dir: string;
  fileName: string;
  deploymentId: string;
  releasedAt: number;
  releasedBy: string;
}

/** A release as its row stores it. */
export const releaseOf = (r: Record<string, unknown>): Release => ({
  assignmentId: String(r.assignment_id), machineId: String(r.machine_id), versionId: String(r.version_id), sha256: String(r.sha256), dir: String(r.dir),
  fileName: String(r.file_name), deploymentId: String(r.deployment_id), releasedAt: Number(r.released_at), releasedBy: String(r.released_by),
});

export interface TimelineEntry {
  status: DeploymentStatus;
  at: number;
  reason?: string;
}

export interface DeploymentRow {
  id: string;
  batchId: string;
  assignmentId: string | null;
  machineId: string;
  gatewayId: string;
  versionId: string | null;
  purpose: DeploymentPurpose;
  dir: string;
  fileName: string;
  sha256: string;
  size: number;
  status: DeploymentStatus;
  reason: string | null;
  transfers: number;
  readBackSha256: string | null;
  timeline: TimelineEntry[];
  snapshot: string | null;
  machineVersion: number;
  deadline: number;
  createdBy: string;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
  /** The instance that drives it (or, once finished, finished it); null until one claims it. */
  holder: string | null;
  /** Grows at every claim: its holder stores its states and makes its transfers under the epoch it claimed it with (lease.ts). */
  leaseEpoch: number;
  /** The trace context of its batch's span, which its steps continue (trace.ts); null when tracing was off when the batch was made. */
  trace: TraceCarrier | null;
}

/** The columns of a deployment's row, in the order `rowOf` reads them. */
export const COLUMNS =
  'id, batch_id, assignment_id, machine_id, gateway_id, version_id, dir, file_name, sha256, size, status, reason, transfers, read_back_sha256, timeline, snapshot, machine_version, deadline, created_by, created_at, updated_at, finished_at, purpose, holder, lease_epoch, trace_parent, trace_state';

/** A deployment as its row stores it. */
export const rowOf = (r: Record<string, unknown>): DeploymentRow => ({
  id: String(r.id), batchId: String(r.batch_id), assignmentId: r.assignment_id ? String(r.assignment_id) : null, machineId: String(r.machine_id), gatewayId: String(r.gateway_id),
  versionId: r.version_id ? String(r.version_id) : null, purpose: String(r.purpose) as DeploymentPurpose, dir: String(r.dir), fileName: String(r.file_name), sha256: String(r.sha256), size: Number(r.size), status: r.status as DeploymentStatus,
  reason: r.reason === null ? null : String(r.reason), transfers: Number(r.transfers), readBackSha256: r.read_back_sha256 === null ? null : String(r.read_back_sha256),
  timeline: JSON.parse(String(r.timeline)) as TimelineEntry[], snapshot: r.snapshot === null ? null : String(r.snapshot), machineVersion: Number(r.machine_version),
  deadline: Number(r.deadline), createdBy: String(r.created_by), createdAt: Number(r.created_at), updatedAt: Number(r.updated_at),
  finishedAt: r.finished_at === null ? null : Number(r.finished_at), holder: r.holder === null || r.holder === undefined ? null : String(r.holder),
  leaseEpoch: Number(r.lease_epoch ?? 0),
  trace: carrierOf(r.trace_parent, r.trace_state),
});

export interface NewDeployment {
  id: string;
  assignmentId: string | null;
  machineId: string;
  gatewayId: string;
  dir: string;
  fileName: string;
  content: Buffer;
  sha256: string;
}

