/**
 * The roles of the program service and what each permits. An operation
 * names one permission; a caller's role must hold it (else 403). Scopes
 * (which libraries) are separate: an object outside them is 404.
 * docs/programs-access.md has this table for people.
 */
export const ROLE_NAMES = ['admin', 'programmer', 'approver', 'operator', 'auditor', 'integration'] as const;
export type RoleName = (typeof ROLE_NAMES)[number];

export const PERMISSIONS = [
  'libraries.read', 'libraries.manage', 'programs.read', 'programs.write', 'versions.read', 'versions.upload', 'versions.submit',
  'versions.obsolete', 'approvals.read', 'approvals.decide', 'audit.read', 'users.manage', 'tokens.manage', 'account.self',
  'fleet.read', 'fleet.manage', 'assignments.manage', 'deployments.read', 'deployments.create', 'webhooks.manage',
  'trials.decide', 'mirror.checkin', 'drift.manage',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

const READ: Permission[] = ['libraries.read', 'programs.read', 'versions.read', 'account.self', 'fleet.read', 'deployments.read'];

export const ROLE_PERMISSIONS: Readonly<Record<RoleName, ReadonlySet<Permission>>> = {
  admin: new Set(PERMISSIONS),
  programmer: new Set([...READ, 'programs.write', 'versions.upload', 'versions.submit', 'approvals.read', 'assignments.manage', 'deployments.create', 'trials.decide', 'mirror.checkin', 'drift.manage']),
  approver: new Set([...READ, 'versions.obsolete', 'approvals.read', 'approvals.decide', 'trials.decide', 'mirror.checkin']),
  operator: new Set([...READ, 'deployments.create', 'trials.decide', 'mirror.checkin', 'drift.manage']),
  auditor: new Set([...READ, 'approvals.read', 'audit.read']),
  integration: new Set([...READ, 'programs.write', 'versions.upload', 'versions.submit', 'approvals.read', 'assignments.manage', 'deployments.create', 'trials.decide', 'mirror.checkin', 'drift.manage']),
};
