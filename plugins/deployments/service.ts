/**
 * What the deployments offer the service's other plugins (the mirror, the
 * dashboard), through the role's service registry: a verified deployment of
 * given bytes to one machine, its outcome, what each assignment releases to
 * each machine, and counts. Declared by declaration merging, so a consumer
 * needs no import of this plugin.
 */
import type { RestPrincipal } from '../../core/rest/operation.js';
import type { Release } from './records.js';

/** What an assignment releases to a machine: the bytes last deployed as a release (or a promoted trial); `sha256` is that of the transformed content the machine got. */
export type ReleaseForUse = Omit<Release, 'releasedBy'>;

export interface DeploymentOutcome {
  id: string;
  status: 'Succeeded' | 'Failed';
  reason: string | null;
  sha256: string;
  readBackSha256: string | null;
}

/** What a managed file on a machine should hold now. */
export interface ExpectedFile {
  assignmentId: string;
  versionId: string;
  dir: string;
  fileName: string;
  sha256: string;
  /** The release, or the trial's version while a trial is active. */
  source: 'release' | 'trial';
  deploymentId: string;
}

export interface RecentDeployment {
  id: string;
  batchId: string;
  machineId: string;
  versionId: string | null;
  purpose: string;
  fileName: string;
  status: string;
  reason: string | null;
  /** Transferring, but waiting for one of its gateway's transfer slots. */
  waitingForSlot: boolean;
  createdBy: string;
  createdAt: number;
  finishedAt: number | null;
}

export interface DeploymentsService {
  /**
   * Puts `content` on a machine as one deployment (a batch of one), verified
   * by reading it back like every deployment, with its audit record; the
   * mirror uses it to deploy a released file back (drift rejected) or to
   * restore a snapshot.
   */
  deployFile(request: {
    machineId: string;
    dir: string;
    fileName: string;
    content: Buffer;
    versionId: string | null;
    assignmentId: string | null;
    purpose: 'drift-reject' | 'restore';
    principal: Pick<RestPrincipal, 'name' | 'onBehalfOf' | 'authMethod'>;
    /** Added to the audit record (ids, why). */
    details?: Record<string, unknown>;
  }): Promise<{ deploymentId: string; batchId: string }>;
  /** Resolves once the deployment is Succeeded or Failed. */
  outcome(deploymentId: string): Promise<DeploymentOutcome>;
  /** What the assignment releases to the machine, if anything was released yet. */
  release(assignmentId: string, machineId: string): Promise<ReleaseForUse | undefined>;
  /** Everything released to a machine, one per assignment. */
  releasesOn(machineId: string): Promise<ReleaseForUse[]>;
  /**
   * What each managed file on a machine should hold now, and the files that
   * are changing (a deployment or a trial's start or pull-back under way), which
   * a reader must not judge yet.
   */
  expectedOn(machineId: string): Promise<{ expected: ExpectedFile[]; busy: { dir: string; fileName: string }[] }>;
  /** The exact bytes deployed under this SHA-256. */
  content(sha256: string): Promise<Buffer | undefined>;
  /** The latest deployments, newest first, of machines `principal` may see. */
  recent(limit: number, principal: RestPrincipal): Promise<RecentDeployment[]>;
  /** Deployments that failed at or after `since` (unix ms). */
  failedSince(since: number): Promise<number>;
  /** Trials that are active (deploying, watched or waiting for a decision). */
  activeTrials(): Promise<number>;
}

declare module '../../core/roles/programs/context.js' {
  interface ProgramsServices {
    deployments: DeploymentsService;
  }
}
