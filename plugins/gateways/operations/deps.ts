/**
 * What every fleet operation shares: the repository, the audit, the link to
 * a gateway (a failure made into a problem a person can act on), and the
 * machine-group scope of the caller.
 */
import type { z } from 'zod';
import { GatewayLinkError, type GatewayLink } from '../../../core/gateway-link/types.js';
import { iso } from '../../../core/rest/fields.js';
import type { AnyRestOperation, RestPrincipal } from '../../../core/rest/operation.js';
import { auditActor } from '../../../core/rest/principal.js';
import { ProblemError } from '../../../core/rest/problem.js';
import type { ProgramsContext } from '../../../core/roles/programs/context.js';
import type { CredentialBox } from '../../../core/store/credential-box.js';
import type { WriteTx } from '../../../core/store/database.js';
import { linkChooser, type LocalGateway } from '../link-choice.js';
import type { FleetRepository, GatewayRecord, MachineRecord } from '../store.js';
import type { machineRecordView } from './views.js';

/** What a fleet audit record says besides who acted; the category is `fleet`. */
export interface FleetAuditEntry { action: string; entityType: string; entityId: string; machine?: string | null; details?: Record<string, unknown> }

export interface FleetDeps {
  ctx: ProgramsContext;
  repo: FleetRepository;
  box: CredentialBox;
  /** The gateway in this process, when it runs one (its entry, its link). */
  local: LocalGateway | undefined;
  /** Records a fleet action of the caller, or of the service itself (null). */
  audit(tx: WriteTx, p: RestPrincipal | null, entry: FleetAuditEntry): Promise<unknown>;
  /** The link that reaches the gateway from this instance (link-choice.ts); throws GatewayLinkError when there is none now. */
  linkFor(g: GatewayRecord): GatewayLink;
  /** Runs a call through a gateway's link, recording contact or error; a link failure becomes a problem a person can act on. */
  through<T>(g: GatewayRecord, call: (link: GatewayLink) => Promise<T>): Promise<T>;
  /** Machines the caller may see: every one with machine-group scope '*', else members of the groups in scope. */
  machineVisible(p: RestPrincipal, m: MachineRecord): Promise<boolean>;
  visibleMachine(p: RestPrincipal, id: string): Promise<MachineRecord>;
  groupVisible(p: RestPrincipal, id: string): boolean;
  machineOut(m: MachineRecord): Promise<z.infer<typeof machineRecordView>>;
}

/** One fleet operation, made from the shared deps. */
export type FleetOperation = (d: FleetDeps) => AnyRestOperation;

function linkProblem(g: GatewayRecord, err: GatewayLinkError): ProblemError {
  const detail = `gateway ${g.name}: ${err.message}`;
  if (err.kind === 'unreachable') return new ProblemError('service-unavailable', detail, { retryAfterSec: 30, extensions: { gatewayError: err.kind } });
  if (err.kind === 'machine-unavailable') return new ProblemError('service-unavailable', detail, { retryAfterSec: 10, extensions: { gatewayError: err.kind } });
  if (err.kind === 'not-found') return new ProblemError('not-found', detail, { extensions: { gatewayError: err.kind } });
  return new ProblemError('unacceptable', detail, { extensions: { gatewayError: err.kind } });
}

export function fleetDeps(ctx: ProgramsContext, repo: FleetRepository, box: CredentialBox, local?: LocalGateway): FleetDeps {
  const linkFor = linkChooser(box, local, ctx.now);
  const machineVisible = async (p: RestPrincipal, m: MachineRecord): Promise<boolean> => {
    const scope = p.scopes.machineGroups ?? '*';
    if (scope === '*') return true;
    return (await repo.groupIdsOf(m.id)).some((g) => scope.includes(g));
  };
  return {
    ctx, repo, box, local, linkFor, machineVisible,
    audit: (tx, p, entry) => ctx.audit.append(tx, { ...auditActor(p), category: 'fleet', ...entry }),
    through: async (g, call) => {
      let link: GatewayLink;
      try {
        link = linkFor(g);
      } catch (err) {
        // No way to it from this instance (the gateway of another instance without an address): nothing was called, so nothing is recorded on it.
        throw err instanceof GatewayLinkError ? linkProblem(g, err) : err;
      }
      try {
        const result = await call(link);
        await repo.recordContact(g.id, ctx.now(), null);
        return result;
      } catch (err) {
        if (!(err instanceof GatewayLinkError)) throw err;
        // A gateway that answered (even with a refusal about a file) is reachable.
        const gatewayDown = err.kind === 'unreachable' || err.kind === 'unauthorized';
        await repo.recordContact(g.id, ctx.now(), gatewayDown ? err.message : null);
        throw linkProblem(g, err);
      }
    },
    visibleMachine: async (p, id) => {
      const m = await repo.machine(id);
      if (!m || !(await machineVisible(p, m))) throw new ProblemError('not-found', `no machine ${id}`);
      return m;
    },
    groupVisible: (p, id) => {
      const scope = p.scopes.machineGroups ?? '*';
      return scope === '*' || scope.includes(id);
    },
    machineOut: async (m) => ({
      id: m.id, gatewayId: m.gatewayId, machineId: m.machineId, name: m.name, driver: m.driver, system: m.system, model: m.model, machineType: m.machineType,
      activeOnGateway: m.activeOnGateway, present: m.present, groupIds: await repo.groupIdsOf(m.id), programDir: m.programDir, transformProfile: m.transformProfile,
      mirror: { enabled: m.mirrorEnabled, intervalSec: m.mirrorIntervalSec }, createdAt: iso(m.createdAt), updatedAt: iso(m.updatedAt),
    }),
  };
}
