/**
 * Which audit records a scoped caller reads (PV-54): a record is shown when
 * the caller could see the object it is about (entityType, entityId) at that
 * object's own endpoint, as the object stands now. A caller whose libraries
 * and machine groups are both `*` reads every record; any other caller reads
 * no record about the service as a whole (no entity, a gateway, an entity
 * type no rule names). docs/audit.md, "Scopes".
 *
 * The answer is one SQL condition over audit_log's columns, part of the
 * query itself, so paging and the CSV export count only what it lets
 * through. Its terms on audit_log's own columns are written `+column`,
 * SQLite's way of keeping a term off the indexes: a page is then read along
 * the primary key (seq) and stops when full, and an export reads the log
 * once, instead of collecting every record in scope and sorting them for
 * each page (docs/audit.md, "Scopes", has the figures). It reads the tables of the plugins whose objects the records name
 * (the audit is the one place that looks across all of them); the rule of a
 * plugin that is not running is left out, and its records are then hidden
 * from scoped callers. Accounts and webhooks say themselves which of theirs
 * lie within the caller (services `accounts.grants`, `webhooks.endpoints`).
 */
import type { LibraryScope, RestPrincipal } from '../../core/rest/operation.js';
import { isUnscoped, scopesOf } from '../../core/rest/scopes.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';
import type { SqlValue } from '../../core/store/database.js';
import type { AuditFilter } from '../../core/roles/programs/audit/chain.js';

/** An SQL fragment (a condition, or a SELECT of one id column) with its parameters in order. */
interface Sql {
  sql: string;
  params: SqlValue[];
}

export type AuditScope = NonNullable<AuditFilter['scope']>;

/** Tagged template: `${x}` of an Sql splices its text and parameters; any other value becomes one parameter. */
function sql(strings: TemplateStringsArray, ...values: (Sql | SqlValue)[]): Sql {
  let text = strings[0] as string;
  const params: SqlValue[] = [];
  values.forEach((v, i) => {
    if (v !== null && typeof v === 'object' && 'sql' in v) {
      text += v.sql;
      params.push(...v.params);
    } else {
      text += '?';
      params.push(v);
    }
    text += strings[i + 1] as string;
  });
  return { sql: text, params };
}

/** SQL text written here, never taken from a request. */
const raw = (text: string): Sql => ({ sql: text, params: [] });

/** The ids of a list as a one-column SELECT (one parameter, whatever the list's length). */
const idsOf = (ids: readonly string[]): Sql => sql`SELECT value FROM json_each(${JSON.stringify(ids)})`;

/** A field of a record's details; null when absent, or when details are not JSON (a tampered row is hidden, never an error). */
const detail = (alias: string, field: string): Sql => raw(`CASE WHEN json_valid(${alias}.details) THEN json_extract(${alias}.details, '$.${field}') END`);

/**
 * Whether the program `id` names was deleted from one of the libraries: its deletion record names the
 * library. Asked, through the (entity_type, entity_id) index, only of records whose object no longer
 * exists (`gone` first): a record of a live object beyond the scopes costs one lookup in a set.
 */
const deletedFrom = (libs: Sql, id: Sql): Sql =>
  sql`EXISTS (SELECT 1 FROM audit_log d WHERE d.entity_type = 'program' AND d.entity_id = ${id} AND d.action = 'program.delete' AND ${detail('d', 'libraryId')} IN (${libs}))`;

/** Whether the version `id` names was uploaded to a program since deleted from one of the libraries. */
const uploadedToDeleted = (libs: Sql, id: Sql): Sql =>
  sql`EXISTS (SELECT 1 FROM audit_log u WHERE u.entity_type = 'version' AND u.entity_id = ${id} AND u.action = 'version.upload' AND ${deletedFrom(libs, detail('u', 'programId'))})`;

/** Whether the record's object is no longer in its table (a deleted program, with its versions and approvals). */
const gone = (table: string): Sql => raw(`+audit_log.entity_id NOT IN (SELECT g.id FROM ${table} g)`);

/** The programs of the listed libraries, as a one-column SELECT. */
const programsOf = (libs: Sql): Sql => sql`SELECT p.id FROM vault_programs p WHERE p.library_id IN (${libs})`;

/** Records of library objects: the library, its programs, their versions and approvals; those of a deleted program stay its library's. */
function vaultRule(libraries: LibraryScope): Sql {
  if (libraries === '*') return sql`+audit_log.entity_type IN ('library', 'program', 'version', 'approval')`;
  const libs = idsOf(libraries);
  const self = raw('+audit_log.entity_id');
  const versions = sql`SELECT v.id FROM vault_versions v WHERE v.program_id IN (${programsOf(libs)})`;
  const approvals = sql`SELECT a.id FROM vault_approvals a WHERE a.version_id IN (${versions})`;
  const approvalOfDeleted = sql`EXISTS (SELECT 1 FROM audit_log c WHERE c.entity_type = 'approval' AND c.entity_id = +audit_log.entity_id AND c.action = 'approval.create' AND ${uploadedToDeleted(libs, detail('c', 'versionId'))})`;
  return sql`(+audit_log.entity_type = 'library' AND +audit_log.entity_id IN (${libs}))
    OR (+audit_log.entity_type = 'program' AND (+audit_log.entity_id IN (${programsOf(libs)}) OR (${gone('vault_programs')} AND ${deletedFrom(libs, self)})))
    OR (+audit_log.entity_type = 'version' AND (+audit_log.entity_id IN (${versions}) OR (${gone('vault_versions')} AND ${uploadedToDeleted(libs, self)})))
    OR (+audit_log.entity_type = 'approval' AND (+audit_log.entity_id IN (${approvals}) OR (${gone('vault_approvals')} AND ${approvalOfDeleted})))`;
}

/** The machines of the listed groups (their members now). */
const machinesOf = (groups: readonly string[]): Sql => sql`SELECT m.machine_id FROM fleet_group_members m WHERE m.group_id IN (${idsOf(groups)})`;

/** Records of the fleet: machines by their groups, groups by id, gateways (which name every machine they have) for callers of every group only. */
function fleetRule(groups: LibraryScope): Sql {
  if (groups === '*') return sql`+audit_log.entity_type IN ('machine', 'machineGroup', 'gateway')`;
  return sql`(+audit_log.entity_type = 'machine' AND +audit_log.entity_id IN (${machinesOf(groups)}))
    OR (+audit_log.entity_type = 'machineGroup' AND +audit_log.entity_id IN (${idsOf(groups)}))`;
}

/** Records about something that happens on one machine (its id in the machine column), seen as the machine is. */
function onMachineRule(types: readonly string[], groups: LibraryScope): Sql {
  const typeList = raw(types.map((t) => `'${t}'`).join(', '));
  if (groups === '*') return sql`+audit_log.entity_type IN (${typeList})`;
  return sql`+audit_log.entity_type IN (${typeList}) AND +audit_log.machine IN (${machinesOf(groups)})`;
}

/** Deployment batches: seen when every machine of the batch is (its record lists them). */
function batchRule(groups: LibraryScope): Sql {
  if (groups === '*') return sql`+audit_log.entity_type = 'batch'`;
  return sql`+audit_log.entity_type = 'batch' AND +audit_log.entity_id IN (SELECT b.batch_id FROM deploy_deployments b)
    AND +audit_log.entity_id NOT IN (SELECT o.batch_id FROM deploy_deployments o WHERE o.machine_id NOT IN (${machinesOf(groups)}))`;
}

/** Assignments: seen when their program and their target (a machine or a group) are, as GET /machine-assignments shows them. */
function assignmentRule(libraries: LibraryScope, groups: LibraryScope): Sql {
  if (libraries === '*' && groups === '*') return sql`+audit_log.entity_type = 'assignment'`;
  const program = libraries === '*' ? sql`1 = 1` : sql`a.program_id IN (${programsOf(idsOf(libraries))})`;
  const target = groups === '*' ? sql`1 = 1` : sql`((a.target_kind = 'machine' AND a.target_id IN (${machinesOf(groups)})) OR (a.target_kind = 'group' AND a.target_id IN (${idsOf(groups)})))`;
  return sql`+audit_log.entity_type = 'assignment' AND +audit_log.entity_id IN (SELECT a.id FROM assignments a WHERE ${program} AND ${target})`;
}

/**
 * The condition a scoped principal's audit records meet, or null for a
 * principal of every library and machine group (no condition at all).
 */
export async function auditScope(ctx: ProgramsContext, principal: RestPrincipal): Promise<AuditScope | null> {
  const scopes = scopesOf(principal);
  if (isUnscoped(scopes)) return null;
  const { libraries, machineGroups: groups } = scopes;
  const has = (service: Parameters<ProgramsContext['services']['find']>[0]) => ctx.services.find(service) !== undefined;
  const rules: Sql[] = [];
  if (has('vault.versions')) rules.push(vaultRule(libraries));
  if (has('gateway-machines')) rules.push(fleetRule(groups));
  if (has('deployments')) rules.push(onMachineRule(['deployment', 'trial'], groups), batchRule(groups));
  if (has('mirror')) rules.push(onMachineRule(['drift', 'machine-file'], groups));
  if (has('assignments')) rules.push(assignmentRule(libraries, groups));
  const accounts = await ctx.services.find('accounts.grants')?.accountsWithin(principal);
  if (accounts) {
    rules.push(sql`(+audit_log.entity_type = 'user' AND +audit_log.entity_id IN (${idsOf(accounts.users)}))
      OR (+audit_log.entity_type = 'serviceToken' AND +audit_log.entity_id IN (${idsOf(accounts.serviceTokens)}))`);
  }
  const webhooks = await ctx.services.find('webhooks.endpoints')?.idsWithin(scopes);
  if (webhooks) rules.push(sql`+audit_log.entity_type = 'webhook' AND +audit_log.entity_id IN (${idsOf(webhooks)})`);
  if (rules.length === 0) return raw('1 = 0');
  return { sql: rules.map((r) => `(${r.sql})`).join('\n OR '), params: rules.flatMap((r) => r.params) };
}
