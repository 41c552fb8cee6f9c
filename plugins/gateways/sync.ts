/**
 * Sync of a gateway: read its machines and groups, record what was added,
 * changed, gone and back, and say so. Shared by POST /gateways/{id}/sync and
 * the service's own syncs (keep-in-step.ts).
 */
import { newId } from '../../core/rest/ids.js';
import { iso } from '../../core/rest/fields.js';
import type { RestPrincipal } from '../../core/rest/operation.js';
import type { WriteTx } from '../../core/store/database.js';
import type { LinkGroup, LinkMachine } from '../../core/gateway-link/types.js';
import type { FleetDeps } from './operations/deps.js';
import type { GatewayRecord, GroupRecord, MachineRecord } from './store.js';
import { programDirSchema } from './operations/machines.js';
import { names, REPORT_MAX_NAMES, type SyncReport } from './operations/views.js';

/** A new machine's mirror interval until someone sets it. */
const DEFAULT_MIRROR_INTERVAL_SEC = 300;

/**
 * A new machine's program directory: the one its gateway names when the service's own
 * rules accept it, else none. Only a new machine takes it: a directory set on the
 * service (or left empty on purpose) is never overwritten by a sync.
 */
function takenProgramDir(m: LinkMachine): string {
  const dir = m.programDir ?? '';
  return programDirSchema.safeParse(dir).success ? dir : '';
}

interface MachineChanges { added: string[]; changed: { machineId: string; fields: string[] }[]; gone: string[]; returned: string[]; unchanged: number }
interface GroupChanges { added: string[]; changed: string[]; gone: string[] }

/** Applies the gateway's machine list; returns the service id of each machine it lists. */
async function syncMachines(d: FleetDeps, tx: WriteTx, g: GatewayRecord, machines: readonly LinkMachine[], now: number, report: MachineChanges): Promise<Map<string, string>> {
  const existing = new Map((await d.repo.machinesOf(g.id)).map((m) => [m.machineId, m]));
  const idByMachineId = new Map<string, string>();
  for (const m of machines) {
    const before = existing.get(m.machineID);
    const fields = { name: m.name, driver: m.driver, system: m.system, model: m.model, machineType: m.machineType, activeOnGateway: m.isActive };
    if (!before) {
      const record: MachineRecord = {
        id: newId('mch'), gatewayId: g.id, machineId: m.machineID, ...fields, present: true, programDir: takenProgramDir(m), transformProfile: null, mirrorEnabled: false,
        mirrorIntervalSec: DEFAULT_MIRROR_INTERVAL_SEC, createdAt: now, updatedAt: now,
      };
      await d.repo.upsertMachine(tx, record, true);
      idByMachineId.set(m.machineID, record.id);
      report.added.push(m.machineID);
      continue;
    }
    idByMachineId.set(m.machineID, before.id);
    const changed = (Object.keys(fields) as (keyof typeof fields)[]).filter((k) => before[k] !== fields[k]);
    if (!before.present) report.returned.push(m.machineID);
    if (changed.length || !before.present) {
      await d.repo.upsertMachine(tx, { ...before, ...fields, present: true, updatedAt: now }, false);
      if (changed.length) report.changed.push({ machineId: m.machineID, fields: changed });
    } else report.unchanged++;
  }
  const listed = new Set(machines.map((m) => m.machineID));
  for (const before of existing.values()) {
    if (listed.has(before.machineId) || !before.present) continue;
    await d.repo.upsertMachine(tx, { ...before, present: false, updatedAt: now }, false);
    report.gone.push(before.machineId);
  }
  return idByMachineId;
}

/** Applies the gateway's groups, their members by service id. */
async function syncGroups(d: FleetDeps, tx: WriteTx, g: GatewayRecord, groups: readonly LinkGroup[], idByMachineId: Map<string, string>, now: number, report: GroupChanges): Promise<void> {
  const existingGroups = new Map((await d.repo.groupsOf(g.id)).map((x): [string, GroupRecord] => [x.gatewayGroupId ?? '', x]));
  for (const grp of groups) {
    const members = grp.machineIDs.map((id) => idByMachineId.get(id)).filter((id): id is string => id !== undefined).sort();
    const before = existingGroups.get(grp.groupID);
    if (!before) {
      await d.repo.saveGroup(tx, { id: newId('grp'), name: grp.name, gatewayId: g.id, gatewayGroupId: grp.groupID, description: '', machineIds: members, createdAt: now, updatedAt: now }, true);
      report.added.push(grp.groupID);
    } else if (before.name !== grp.name || before.machineIds.join() !== members.join()) {
      await d.repo.saveGroup(tx, { ...before, name: grp.name, machineIds: members, updatedAt: now }, false);
      report.changed.push(grp.groupID);
    }
  }
  const listedGroups = new Set(groups.map((x) => x.groupID));
  for (const before of existingGroups.values()) {
    // A group its gateway no longer has keeps its id (scopes may name it) but no members.
    if (listedGroups.has(before.gatewayGroupId ?? '') || before.machineIds.length === 0) continue;
    await d.repo.saveGroup(tx, { ...before, machineIds: [], updatedAt: now }, false);
    report.gone.push(before.gatewayGroupId ?? before.id);
  }
}

/** Syncs the gateway for the caller (null: the service itself, at start) and reports what changed. */
export async function syncGateway(d: FleetDeps, g: GatewayRecord, p: RestPrincipal | null): Promise<SyncReport> {
  const [machines, groups] = await d.through(g, (link) => Promise.all([link.listMachines(), link.listGroups()]));
  const now = d.ctx.now();
  const report: MachineChanges = { added: [], changed: [], gone: [], returned: [], unchanged: 0 };
  const groupReport: GroupChanges = { added: [], changed: [], gone: [] };
  await d.ctx.db.write(async (tx) => {
    const idByMachineId = await syncMachines(d, tx, g, machines, now, report);
    await syncGroups(d, tx, g, groups, idByMachineId, now, groupReport);
    await d.repo.setSynced(tx, g.id, now);
    // The service's own syncs (at start, on the gateway's events, on the interval) are audited only when they changed something.
    const changed = report.added.length + report.changed.length + report.gone.length + report.returned.length + groupReport.added.length + groupReport.changed.length + groupReport.gone.length > 0;
    if (p === null && !changed) return;
    await d.audit(tx, p, {
      action: 'gateway.sync', entityType: 'gateway', entityId: g.id,
      details: {
        added: report.added.slice(0, REPORT_MAX_NAMES), changed: report.changed.slice(0, REPORT_MAX_NAMES).map((c) => c.machineId), gone: report.gone.slice(0, REPORT_MAX_NAMES),
        returned: report.returned.slice(0, REPORT_MAX_NAMES), unchanged: report.unchanged, groups: groupReport,
      },
    });
  }, { transaction: true });
  return {
    gatewayId: g.id,
    machines: { added: names(report.added), changed: report.changed.slice(0, REPORT_MAX_NAMES), gone: names(report.gone), returned: names(report.returned), unchanged: report.unchanged },
    groups: { added: names(groupReport.added), changed: names(groupReport.changed), gone: names(groupReport.gone) },
    syncedAt: iso(now),
  };
}
