/**
 * The fleet entry of the gateway in this instance's process. Each
 * in-process gateway is its own entry, keyed by the gateway's own gatewayID
 * (the UUID in its data directory's `gateway-id`), so instances on one
 * database each add theirs and never serve another's machines. The rule at
 * start (docs/programs-fleet.md, "The gateway in each instance"):
 *
 * - the entry keyed by this gateway's ID is this gateway's, unless an
 *   instance elsewhere (another host or data directory) runs it now on the
 *   same PostgreSQL database: then two gateways share one ID (a copied
 *   `gateway-id`) and the start is refused;
 * - on SQLite (one process per database) the database's in-process entry is
 *   this gateway's: an entry from before gateways were told apart is taken
 *   over, one keyed by another gateway's ID refuses the start;
 * - on PostgreSQL an entry from before gateways were told apart may have been
 *   served by several hosts: the start is refused until one instance is told
 *   it is its gateway's (`programs.adoptGateway`);
 * - otherwise this gateway gets a new entry, named `local` while that is free.
 *
 * While it runs, the instance holds its entry (`served_by`, `served_until`),
 * renewed every SERVING_RENEW_MS and released at a clean stop.
 */
import type { LinkIdentity } from '../../core/gateway-link/types.js';
import { newId } from '../../core/rest/ids.js';
import { auditActor } from '../../core/rest/principal.js';
import type { ProgramsContext } from '../../core/roles/programs/context.js';
import type { WriteTx } from '../../core/store/database.js';
import type { FleetRepository, GatewayRecord } from './store.js';

/** How long an instance's hold on its gateway's entry lasts unless renewed. */
export const SERVING_LEASE_MS = 30_000;
/** How often the instance renews it. */
export const SERVING_RENEW_MS = 10_000;

/** The setting that names the entry an instance's gateway takes over, as the configuration and the environment spell it. */
export const ADOPT_SETTING = 'programs.adoptGateway (PROGRAMS_ADOPT_GATEWAY)';

export interface LocalEntryFacts {
  /** Who the gateway in this process is. */
  identity: LinkIdentity;
  /** This host's name, shown with the entry. */
  host: string;
  /** This instance's place (host and data directory): a restart in the same place is the same gateway. */
  servedBy: string;
  /** Whether other instances may share the database (PostgreSQL); on SQLite one process has it. */
  shared: boolean;
  /** The entry `programs.adoptGateway` names, when set. */
  adopt: string | undefined;
  /** The gateway's `gateway-id` file, for messages. */
  idFile: string;
  now: number;
}

/** What the rule decides: the entry to use (kept, or taken over), a new one, or a refusal in words an operator acts on. */
export type LocalEntryDecision =
  | { kind: 'own'; entry: GatewayRecord }
  | { kind: 'adopt'; entry: GatewayRecord; why: 'earlier entry' | 'setting' }
  | { kind: 'new'; name: string }
  | { kind: 'refuse'; message: string };

/**
 * Whether another instance (elsewhere) runs the entry's gateway now, on this
 * database. Only a shared database can have one: a SQLite database is one
 * process's, and a hold in a copy of it (a backup restored elsewhere) is the
 * copied one's.
 */
const heldElsewhere = (e: GatewayRecord, f: LocalEntryFacts) => f.shared && e.servedBy !== null && e.servedBy !== f.servedBy && e.servedUntil !== null && e.servedUntil > f.now;
const described = (e: GatewayRecord) => `'${e.name}' (${e.id})`;

/** The decision on an entry `programs.adoptGateway` names; undefined when the rule goes on as without it. */
function adoptDecision(target: GatewayRecord | undefined, mine: GatewayRecord | undefined, f: LocalEntryFacts): LocalEntryDecision | undefined {
  const id = f.identity.gatewayID;
  if (!target) return { kind: 'refuse', message: `${ADOPT_SETTING} names ${f.adopt ?? ''}, which is no gateway of this database: name the entry of GET /api/v1/gateways that this gateway takes over, or remove the setting` };
  if (target.kind !== 'in-process') return { kind: 'refuse', message: `${ADOPT_SETTING} names ${described(target)}, a remote gateway reached over HTTP, not the gateway of an instance: remove the setting` };
  if (target.gatewayUid === id) return undefined;
  if (mine) return { kind: 'refuse', message: `${ADOPT_SETTING} names ${described(target)}, but this gateway (${id}) has its own entry ${described(mine)}: remove the setting` };
  if (heldElsewhere(target, f)) return { kind: 'refuse', message: `${ADOPT_SETTING} names ${described(target)}, which the instance at ${target.servedBy ?? ''} runs now: stop that instance first, or remove the setting` };
  return { kind: 'adopt', entry: target, why: 'setting' };
}

/** The name of a new entry: `local` while free, else `local-` and the start of the gateway's ID. */
function newName(taken: ReadonlySet<string>, id: string): string {
  for (const name of ['local', `local-${id.slice(0, 8)}`]) if (!taken.has(name)) return name;
  return `local-${id}`;
}

/**
 * Decides which entry is this gateway's, from the in-process entries of the
 * database, the entry the setting names (read by its id) and the names taken.
 */
export function decideLocalEntry(entries: readonly GatewayRecord[], adopted: GatewayRecord | undefined, takenNames: ReadonlySet<string>, f: LocalEntryFacts): LocalEntryDecision {
  const id = f.identity.gatewayID;
  const mine = entries.find((e) => e.gatewayUid === id);
  if (f.adopt !== undefined) {
    const decision = adoptDecision(adopted, mine, f);
    if (decision) return decision;
  }
  if (mine) {
    if (!heldElsewhere(mine, f)) return { kind: 'own', entry: mine };
    return {
      kind: 'refuse',
      message: `this gateway's ID ${id} (${f.idFile}) is the gateway of entry ${described(mine)}, which the instance at ${mine.servedBy ?? ''} runs now: two gateways have one ID, as when a data directory is copied with its gateway-id. Delete ${f.idFile} here (a new ID is made at the next start) and start again`,
    };
  }
  const earlier = entries.filter((e) => e.gatewayUid === null);
  if (!f.shared) {
    const other = entries.find((e) => e.gatewayUid !== null);
    if (other) {
      return {
        kind: 'refuse',
        message: `programs.db holds the gateway of entry ${described(other)}, gatewayID ${other.gatewayUid ?? ''}, but the gateway of this data directory is ${id} (${f.idFile}): restore that gateway-id, or, if this gateway now has that entry's machines, start once with ${ADOPT_SETTING}=${other.id}`,
      };
    }
    if (earlier[0]) return { kind: 'adopt', entry: earlier[0], why: 'earlier entry' };
    return { kind: 'new', name: newName(takenNames, id) };
  }
  if (earlier[0]) {
    return {
      kind: 'refuse',
      message: `the database holds the in-process gateway entry ${described(earlier[0])}, registered before each instance's gateway had an entry of its own; several hosts may have served it, so no instance takes it over by itself. If this host's gateway (${id}, ${f.idFile}) has the machines it lists, start this instance once with ${ADOPT_SETTING}=${earlier[0].id}; otherwise start the instance whose gateway it is with that setting first`,
    };
  }
  return { kind: 'new', name: newName(takenNames, id) };
}

/** A refusal of the start: the message says what to do. */
export class LocalGatewayRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LocalGatewayRefused';
  }
}

/** Finds or makes this gateway's entry by the rule, in one transaction under a lock (instances starting together decide one after the other). */
export async function registerLocalGateway(ctx: Pick<ProgramsContext, 'db' | 'audit'>, repo: FleetRepository, f: LocalEntryFacts): Promise<{ entry: GatewayRecord; decision: LocalEntryDecision['kind'] }> {
  return ctx.db.write(async (tx) => {
    await tx.lock('fleet-local-gateways');
    const entries = await repo.inProcessGateways(tx);
    const adopted = f.adopt === undefined ? undefined : await repo.gatewayIn(tx, f.adopt);
    const names = new Set((await tx.all<{ name_key: string }>('SELECT name_key FROM fleet_gateways')).map((r) => r.name_key));
    const decision = decideLocalEntry(entries, adopted, names, f);
    const at = { uid: f.identity.gatewayID, host: f.host, servedBy: f.servedBy, until: f.now + SERVING_LEASE_MS };
    switch (decision.kind) {
      case 'refuse':
        throw new LocalGatewayRefused(decision.message);
      case 'own':
        await repo.serve(tx, decision.entry.id, at);
        return { entry: { ...decision.entry, gatewayUid: at.uid, host: at.host, servedBy: at.servedBy, servedUntil: at.until }, decision: decision.kind };
      case 'adopt':
        await repo.serve(tx, decision.entry.id, at);
        await audit(ctx, tx, 'gateway.adopt', decision.entry.id, { name: decision.entry.name, gatewayID: at.uid, host: f.host, formerGatewayID: decision.entry.gatewayUid, by: decision.why });
        return { entry: { ...decision.entry, gatewayUid: at.uid, host: at.host, servedBy: at.servedBy, servedUntil: at.until }, decision: decision.kind };
      case 'new': {
        const entry: GatewayRecord = {
          id: newId('gw'), name: decision.name, kind: 'in-process', url: 'in-process', sealedKey: null, createdBy: 'system', createdAt: f.now,
          lastContactAt: null, lastError: null, lastErrorAt: null, lastSyncAt: null, gatewayUid: at.uid, host: at.host, servedBy: at.servedBy, servedUntil: at.until,
        };
        await repo.insertGateway(tx, entry);
        await audit(ctx, tx, 'gateway.register', entry.id, { name: entry.name, kind: 'in-process', gatewayID: at.uid, host: f.host });
        return { entry, decision: decision.kind };
      }
    }
  }, { transaction: true });
}

function audit(ctx: Pick<ProgramsContext, 'audit'>, tx: WriteTx, action: string, entityId: string, details: Record<string, unknown>): Promise<unknown> {
  return ctx.audit.append(tx, { ...auditActor(null), category: 'fleet', action, entityType: 'gateway', entityId, details });
}

/**
 * Keeps the instance's hold on its entry: renews it every SERVING_RENEW_MS
 * (a failed renewal is logged and tried again), and releases it at `stop`.
 */
export function keepServing(repo: FleetRepository, entryId: string, servedBy: string, now: () => number, onError: (err: Error) => void): { stop(): Promise<void> } {
  let running: Promise<unknown> | undefined;
  const renew = async () => {
    // Lost only when this instance stalled past its hold and the same gateway started elsewhere, which that start refuses while the hold lasts.
    if (!(await repo.renewServing(entryId, servedBy, now() + SERVING_LEASE_MS))) onError(new Error(`the gateway's entry ${entryId} is held by another instance now`));
  };
  const timer = setInterval(() => {
    running ??= renew().catch(onError).finally(() => (running = undefined));
  }, SERVING_RENEW_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
      await repo.releaseServing(entryId, servedBy).catch(onError);
    },
  };
}
