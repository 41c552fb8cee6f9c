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
import type { Dialect } from '../../core/store/sql-database.js';
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

/** The pieces of the condition whose text differs by engine. */
interface Terms {
  /** The ids of a list as a one-column SELECT (one parameter, whatever the list's length). */
  ids(list: readonly string[]): Sql;
  /** A field of a record's details; null when absent, or when details are not JSON (a tampered row is hidden, never an error). */
  detail(alias: string, field: string): Sql;
}

function termsFor(dialect: Dialect): Terms {
  return {
    ids: (list) => ({ sql: dialect.textsOf, params: [JSON.stringify(list)] }),
    // PostgreSQL 15 has no json_valid: the audit schema's audit_detail answers null where the cast to json fails.
    detail: (alias, field) =>
      raw(dialect.engine === 'postgres' ? `audit_detail(${alias}.details, '${field}')` : `CASE WHEN json_valid(${alias}.details) THEN json_extract(${alias}.details, '$.${field}') END`),
  };
}

/**
 * Whether the program `id` names was deleted from one of the libraries: its deletion record names the
 * library. Asked, through the (entity_type, entity_id) index, only of records whose object no longer
 * exists (`gone` first): a record of a live object beyond the scopes costs one lookup in a set.
 */
const deletedFrom = (t: Terms, libs: Sql, id: Sql): Sql =>
  sql`EXISTS (SELECT 1 FROM audit_log d WHERE d.entity_type = 'program' AND d.entity_id = ${id} AND d.action = 'program.delete' AND ${t.detail('d', 'libraryId')} IN (${libs}))`;

/** Whether the version `id` names was uploaded to a program since deleted from one of the libraries. */
const uploadedToDeleted = (t: Terms, libs: Sql, id: Sql): Sql =>
  sql`EXISTS (SELECT 1 FROM audit_log u WHERE u.entity_type = 'version' AND u.entity_id = ${id} AND u.action = 'version.upload' AND ${deletedFrom(t, libs, t.detail('u', 'programId'))})`;

/** Whether the record's object is no longer in its table (a deleted program, with its versions and approvals). */
const gone = (table: string): Sql => raw(`+audit_log.entity_id NOT IN (SELECT g.id FROM ${table} g)`);

/** The programs of the listed libraries, as a one-column SELECT. */
const programsOf = (libs: Sql): Sql => sql`SELECT p.id FROM vault_programs p WHERE p.library_id IN (${libs})`;

/** Records of library objects: the library, its programs, their versions and approvals; those of a deleted program stay its library's. */
function vaultRule(t: Terms, libraries: LibraryScope): Sql {
  if (libraries === '*') return sql`+audit_log.entity_type IN ('library', 'program', 'version', 'approval')`;
  const libs = t.ids(libraries);
  const self = raw('+audit_log.entity_id');
  const versions = sql`SELECT v.id FROM vault_versions v WHERE v.program_id IN (${programsOf(libs)})`;
  const approvals = sql`SELECT a.id FROM vault_approvals a WHERE a.version_id IN (${versions})`;
  const approvalOfDeleted = sql`EXISTS (SELECT 1 FROM audit_log c WHERE c.entity_type = 'approval' AND c.entity_id = +audit_log.entity_id AND c.action = 'approval.create' AND ${uploadedToDeleted(t, libs, t.detail('c', 'versionId'))})`;
  return sql`(+audit_log.entity_type = 'library' AND +audit_log.entity_id IN (${libs}))
    OR (+audit_log.entity_type = 'program' AND (+audit_log.entity_id IN (${programsOf(libs)}) OR (${gone('vault_programs')} AND ${deletedFrom(t, libs, self)})))
    OR (+audit_log.entity_type = 'version' AND (+audit_log.entity_id IN (${versions}) OR (${gone('vault_versions')} AND ${uploadedToDeleted(t, libs, self)})))
    OR (+audit_log.entity_type = 'approval' AND (+audit_log.entity_id IN (${approvals}) OR (${gone('vault_approvals')} AND ${approvalOfDeleted})))`;
}

/** The machines of the listed groups (their members now). */
const machinesOf = (t: Terms, groups: readonly string[]): Sql => sql`SELECT m.machine_id FROM fleet_group_members m WHERE m.group_id IN (${t.ids(groups)})`;

/** Records of the fleet: machines by their groups, groups by id, gateways (which name every machine they have) for callers of every group only. */
function fleetRule(t: Terms, groups: LibraryScope): Sql {
  if (groups === '*') return sql`+audit_log.entity_type IN ('machine', 'machineGroup', 'gateway')`;
  return sql`(+audit_log.entity_type = 'machine' AND +audit_log.entity_id IN (${machinesOf(t, groups)}))
    OR (+audit_log.entity_type = 'machineGroup' AND +audit_log.entity_id IN (${t.ids(groups)}))`;
}

/** Records about something that happens on one machine (its id in the machine column), seen as the machine is. */
function onMachineRule(t: Terms, types: readonly string[], groups: LibraryScope): Sql {
  const typeList = raw(types.map((t) => `'${t}'`).join(', '));
  if (groups === '*') return sql`+audit_log.entity_type IN (${typeList})`;
  return sql`+audit_log.entity_type IN (${typeList}) AND +audit_log.machine IN (${machinesOf(t, groups)})`;
}

/** Deployment batches: seen when every machine of the batch is (its record lists them). */
function batchRule(t: Terms, groups: LibraryScope): Sql {
  if (groups === '*') return sql`+audit_log.entity_type = 'batch'`;
  return sql`+audit_log.entity_type = 'batch' AND +audit_log.entity_id IN (SELECT b.batch_id FROM deploy_deployments b)
    AND +audit_log.entity_id NOT IN (SELECT o.batch_id FROM deploy_deployments o WHERE o.machine_id NOT IN (${machinesOf(t, groups)}))`;
}

/** Assignments: seen when their program and their target (a machine or a group) are, as GET /machine-assignments shows them. */
function assignmentRule(t: Terms, libraries: LibraryScope, groups: LibraryScope): Sql {
  if (libraries === '*' && groups === '*') return sql`+audit_log.entity_type = 'assignment'`;
  const program = libraries === '*' ? sql`1 = 1` : sql`a.program_id IN (${programsOf(t.ids(libraries))})`;
  const target = groups === '*' ? sql`1 = 1` : sql`((a.target_kind = 'machine' AND a.target_id IN (${machinesOf(t, groups)})) OR (a.target_kind = 'group' AND a.target_id IN (${t.ids(groups)})))`;
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
  const t = termsFor(ctx.db.dialect);
  const rules: Sql[] = [];
  if (has('vault.versions')) rules.push(vaultRule(t, libraries));
  if (has('gateway-machines')) rules.push(fleetRule(t, groups));
  if (has('deployments')) rules.push(onMachineRule(t, ['deployment', 'trial'], groups), batchRule(t, groups));
  if (has('mirror')) rules.push(onMachineRule(t, ['drift', 'machine-file'], groups));
  if (has('assignments')) rules.push(assignmentRule(t, libraries, groups));
  const accounts = await ctx.services.find('accounts.grants')?.accountsWithin(principal);
  if (accounts) {
    rules.push(sql`(+audit_log.entity_type = 'user' AND +audit_log.entity_id IN (${t.ids(accounts.users)}))
      OR (+audit_log.entity_type = 'serviceToken' AND +audit_log.entity_id IN (${t.ids(accounts.serviceTokens)}))`);
  }
  const webhooks = await ctx.services.find('webhooks.endpoints')?.idsWithin(scopes);
  if (webhooks) rules.push(sql`+audit_log.entity_type = 'webhook' AND +audit_log.entity_id IN (${t.ids(webhooks)})`);
  if (rules.length === 0) return raw('1 = 0');
  const condition = rules.map((r) => `(${r.sql})`).join('\n OR ');
  // `+column` is SQLite's hint alone: PostgreSQL has no unary + on text, and plans the condition itself.
  return { sql: ctx.db.dialect.engine === 'postgres' ? condition.replaceAll('+audit_log.', 'audit_log.') : condition, params: rules.flatMap((r) => r.params) };
}
