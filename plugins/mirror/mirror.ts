/**
 * The mirror: reads each enabled machine's program files through its
 * gateway on its interval (and at once on a check-in), keeps a snapshot of
 * every content it has not seen on that file before, opens a drift item for a
 * managed file that differs from what was released (or from the trial's
 * version while a trial is active), resolves it when the file is right again,
 * and records what the machine is running against what was released.
 */
import { newInstanceId } from '../../core/runtime/instance-id.js';
import { sha256Hex } from '../../core/values/hash.js';
import { newId } from '../../core/rest/ids.js';
import type { Logger } from 'pino';
import type { GatewayLink, LinkProgramFile } from '../../core/gateway-link/types.js';
import { SERVICE_PRINCIPAL as SYSTEM } from '../../core/rest/operation.js';
import type { ProgramsContext, ProgramsServices } from '../../core/roles/programs/context.js';
import type { MirrorFile, MirrorRepository, RunningProof } from './store.js';
import { SYSTEM_ACTOR } from '../../core/rest/principal.js';

/** Files read per machine at most; more are left for the next run (and counted as an error). */
export const MAX_FILES_PER_MACHINE = 2000;
/** A file larger than this is listed but its content not kept. */
export const MAX_FILE_BYTES = 4 * 1024 * 1024;
/** Machines read at once per gateway. */
const READS_PER_GATEWAY = 2;
/** How often the scheduler looks for machines that are due. */
const TICK_MS = 1000;
/** How long an interval read's claim lasts when its instance dies before recording the read: then another instance reads the machine. */
const READ_CLAIM_MS = 5 * 60_000;


type FleetMachine = NonNullable<Awaited<ReturnType<ProgramsServices['gateway-machines']['machine']>>>;

const keyOf = (dir: string, name: string) => `${dir}\u0000${name}`;
/** A file as this read saw it: its record, its content's hash (null: not read) and its snapshot. */
interface SeenFile { file: MirrorFile; sha256: string | null; snapshotId: string | null }
type ExpectedFile = Awaited<ReturnType<ProgramsServices['deployments']['expectedOn']>>['expected'][number];
/** Directories compared as the gateways write them: trailing separators do not matter. */
const sameDir = (a: string, b: string) => a.replace(/[\\/]+$/, '') === b.replace(/[\\/]+$/, '');

export interface RunReport {
  machineId: string;
  trigger: 'interval' | 'checkin';
  at: number;
  ok: boolean;
  error: string | null;
  files: number;
  /** Files whose content was new for that file (a snapshot was taken). */
  snapshots: number;
  driftOpened: string[];
  driftResolved: string[];
  running: RunningProof | null;
}

/** When a machine's next interval read is due: at once if it was never read. */
export function dueAt(lastRunAt: number | null, intervalSec: number): number {
  return lastRunAt === null ? 0 : lastRunAt + intervalSec * 1000;
}

export class Mirror {
  private timer: NodeJS.Timeout | undefined;
  private readonly running = new Map<string, Promise<RunReport>>();
  private readonly perGateway = new Map<string, number>();
  private stopped = false;
  /** This instance, as the claims of its interval reads name it. */
  private readonly reader = newInstanceId();

  constructor(
    private readonly ctx: ProgramsContext,
    private readonly repo: MirrorRepository,
    private readonly logger: Logger,
  ) {}

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      void this.runDue().finally(() => {
        if (!this.stopped) this.timer = setTimeout(tick, TICK_MS).unref();
      });
    };
    this.timer = setTimeout(tick, 0).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await Promise.allSettled([...this.running.values()]);
  }

  private async runDue(): Promise<void> {
    let machines: Awaited<ReturnType<ProgramsServices['gateway-machines']['mirrored']>>;
    try {
      machines = await this.ctx.services.get('gateway-machines').mirrored();
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'mirror: machines not read');
      return;
    }
    const now = this.ctx.now();
    for (const m of machines) {
      if (this.stopped) return;
      // A machine of another instance's gateway that this one has no way to is read by that instance.
      if (!m.reachableHere || this.running.has(m.id) || (this.perGateway.get(m.gatewayId) ?? 0) >= READS_PER_GATEWAY) continue;
      const state = await this.repo.machine(m.id);
      if (dueAt(state?.lastRunAt ?? null, m.mirrorIntervalSec) > now) continue;
      // Another instance on the same database may be reading it, or have just read it.
      if (!(await this.repo.claimRead(m.id, this.reader, now, now - m.mirrorIntervalSec * 1000, READ_CLAIM_MS))) continue;
      void this.run(m.id, 'interval');
    }
  }

  /** Reads one machine now (a check-in, or its interval); a read already under way is shared. */
  run(machineId: string, trigger: RunReport['trigger']): Promise<RunReport> {
    const busy = this.running.get(machineId);
    if (busy) return busy;
    const job = (async () => {
      const machine = await this.ctx.services.get('gateway-machines').machine(machineId, SYSTEM);
      if (!machine) throw new Error(`machine ${machineId} is not in the fleet`);
      this.perGateway.set(machine.gatewayId, (this.perGateway.get(machine.gatewayId) ?? 0) + 1);
      try {
        return await this.read(machine, trigger);
      } finally {
        this.perGateway.set(machine.gatewayId, (this.perGateway.get(machine.gatewayId) ?? 1) - 1);
      }
    })();
    this.running.set(machineId, job);
    void job.catch(() => undefined).finally(() => this.running.delete(machineId));
    return job;
  }

  private async read(machine: FleetMachine, trigger: RunReport['trigger']): Promise<RunReport> {
    const fleet = this.ctx.services.get('gateway-machines');
    const at = this.ctx.now();
    const report: RunReport = { machineId: machine.id, trigger, at, ok: false, error: null, files: 0, snapshots: 0, driftOpened: [], driftResolved: [], running: null };
    let link: GatewayLink;
    try {
      link = await fleet.linkFor(machine);
    } catch (err) {
      return this.failed(report, `the machine's gateway cannot be reached: ${(err as Error).message}`);
    }
    const { expected, busy } = await this.ctx.services.get('deployments').expectedOn(machine.id);
    const problems: string[] = [];
    const list = await this.list(link, machine, [...new Set([machine.programDir, ...expected.map((e) => e.dir)])], problems);
    if (!list) return this.failed(report, problems.join('; '));
    await fleet.noteContact(machine.gatewayId, null);
    const files = list.listed.slice(0, MAX_FILES_PER_MACHINE);
    if (list.listed.length > MAX_FILES_PER_MACHINE) problems.push(`${list.listed.length} files; the first ${MAX_FILES_PER_MACHINE} are mirrored`);
    const seen = new Map<string, SeenFile>();
    for (const f of files) {
      const stored = await this.snapshot(link, machine, f, at, trigger, problems);
      if (stored.snap) report.snapshots++;
      seen.set(keyOf(f.dir, f.name), stored);
    }
    report.files = seen.size;
    // The directories read: those named, and (for the gateway's default directory) those its files are in.
    await this.markGone(machine, seen, [...list.readDirs.filter((d) => d !== ''), ...files.map((f) => f.dir)], at);
    // Drift: each managed file against what it should hold.
    const isBusy = (dir: string, name: string) => busy.some((b) => sameDir(b.dir, dir) && b.fileName === name);
    for (const e of expected) {
      if (isBusy(e.dir, e.fileName)) continue;
      const found = [...seen.values()].find((x) => sameDir(x.file.dir, e.dir) && x.file.name === e.fileName);
      const outcome = await this.judge(machine, e, found, at);
      if (outcome?.opened) report.driftOpened.push(outcome.opened);
      if (outcome?.resolved) report.driftResolved.push(...outcome.resolved);
    }
    if (report.driftOpened.length) this.ctx.services.get('webhooks.outbox').kick();
    const running = await this.runningOn(link, machine, expected);
    if (!('error' in running)) report.running = running;
    report.ok = problems.length === 0;
    report.error = problems.length ? problems.slice(0, 5).join('; ').slice(0, 600) : null;
    await this.repo.recordRun(machine.id, at, { error: report.error, files: report.files, running });
    return report;
  }

  /** Lists the directories; null when the machine's program directory cannot be listed (the read fails). */
  private async list(link: GatewayLink, machine: FleetMachine, dirs: readonly string[], problems: string[]): Promise<{ listed: LinkProgramFile[]; readDirs: string[] } | null> {
    const fleet = this.ctx.services.get('gateway-machines');
    const listed: LinkProgramFile[] = [];
    const readDirs: string[] = [];
    for (const dir of dirs) {
      try {
        listed.push(...(await link.listPrograms(machine.machineId, dir || undefined)));
        readDirs.push(dir);
      } catch (err) {
        const e = err as Error & { kind?: string };
        if (e.kind === 'unreachable' || e.kind === 'unauthorized') await fleet.noteContact(machine.gatewayId, e.message);
        problems.push(`listing ${dir || 'the program directory'}: ${e.message}`);
        if (dir === machine.programDir) return null;
      }
    }
    return { listed, readDirs };
  }

  /** Reads one listed file and keeps its content as a snapshot when it changed (a file too large is listed, not kept). */
  private async snapshot(link: GatewayLink, machine: FleetMachine, f: LinkProgramFile, at: number, trigger: RunReport['trigger'], problems: string[]): Promise<SeenFile & { snap: boolean }> {
    let content: Buffer | null = null;
    if (f.size <= MAX_FILE_BYTES) {
      try {
        content = (await link.downloadProgram(machine.machineId, f.dir, f.name)).content;
      } catch (err) {
        problems.push(`reading ${f.dir}${f.name}: ${(err as Error).message}`);
      }
    } else {
      problems.push(`${f.dir}${f.name} has ${f.size} bytes; files above ${MAX_FILE_BYTES} are listed, not kept`);
    }
    return this.ctx.db.write(async (tx) => {
      let file = await this.repo.fileIn(tx, machine.id, f.dir, f.name);
      if (!file) {
        file = { id: newId('mfl'), machineId: machine.id, dir: f.dir, name: f.name, sha256: null, size: null, present: true, firstSeenAt: at, lastSeenAt: at, goneAt: null, adoptedProgramId: null };
        await this.repo.insertFile(tx, file);
      }
      if (!content) return { file, sha256: file.sha256, snapshotId: null, snap: false };
      const sha256 = sha256Hex(content);
      await this.repo.seen(tx, file.id, sha256, content.length, at);
      const last = await this.repo.lastSnapshot(tx, file.id);
      if (last?.sha256 === sha256) return { file: { ...file, sha256 }, sha256, snapshotId: last.id, snap: false };
      const snapshotId = newId('snp');
      await this.repo.addSnapshot(tx, { id: snapshotId, fileId: file.id, sha256, size: content.length, takenAt: at, trigger }, content);
      return { file: { ...file, sha256 }, sha256, snapshotId, snap: true };
    }, { transaction: true });
  }

  /** Files no longer listed in a directory that was read are gone. */
  private async markGone(machine: FleetMachine, seen: ReadonlyMap<string, SeenFile>, readAt: readonly string[], at: number): Promise<void> {
    const known = await this.repo.filesOf(machine.id);
    await this.ctx.db.write(async (tx) => {
      for (const file of known) {
        if (file.present && readAt.some((d) => sameDir(d, file.dir)) && !seen.has(keyOf(file.dir, file.name))) {
          await this.repo.gone(tx, file.id, at);
        }
      }
    }, { transaction: true });
  }

  /** One managed file against what it should hold: drift opened, resolved, or nothing new. */
  private judge(machine: FleetMachine, e: ExpectedFile, found: SeenFile | undefined, at: number): Promise<{ opened?: string; resolved?: string[] } | null> {
    return this.ctx.db.write(async (tx): Promise<{ opened?: string; resolved?: string[] } | null> => {
      let file = found?.file ?? (await this.repo.fileIn(tx, machine.id, e.dir, e.fileName));
      if (!file) {
        file = { id: newId('mfl'), machineId: machine.id, dir: e.dir, name: e.fileName, sha256: null, size: null, present: false, firstSeenAt: at, lastSeenAt: null, goneAt: at, adoptedProgramId: null };
        await this.repo.insertFile(tx, file);
      }
      const foundSha = found ? found.sha256 : null;
      if (found && foundSha === null) return null; // listed but not read: no judgement
      const live = await this.repo.liveDriftOf(tx, file.id);
      if (foundSha === e.sha256) {
        const resolved: string[] = [];
        for (const d of live.filter((x) => x.status === 'open')) {
          await this.repo.decide(tx, d.id, ['open'], 'resolved', { by: null, at, note: 'the file on the machine is what was released again' });
          await this.ctx.audit.append(tx, { ...SYSTEM_ACTOR, category: 'mirror', action: 'drift.resolve', entityType: 'drift', entityId: d.id, machine: machine.id, details: { fileId: file.id, sha256: foundSha } });
          resolved.push(d.id);
        }
        return { resolved };
      }
      // The same difference already reported (open) or accepted is not reported again; an open item follows the file's latest content.
      if (live.some((d) => d.status === 'accepted' && d.expectedSha256 === e.sha256 && d.foundSha256 === foundSha)) return null;
      const open = live.find((d) => d.status === 'open' && d.expectedSha256 === e.sha256);
      if (open) {
        if (open.foundSha256 !== foundSha) await this.repo.updateFound(tx, open.id, foundSha, found?.snapshotId ?? null, at);
        return null;
      }
      const id = newId('dft');
      await this.repo.insertDrift(tx, {
        id, fileId: file.id, machineId: machine.id, assignmentId: e.assignmentId, expectedSource: e.source, expectedVersionId: e.versionId, expectedSha256: e.sha256,
        foundSha256: foundSha, snapshotId: found?.snapshotId ?? null, status: 'open', openedAt: at, updatedAt: at, decidedBy: null, decidedAt: null, note: null, resultVersionId: null, resultDeploymentId: null,
      });
      const details = { fileId: file.id, dir: e.dir, fileName: e.fileName, assignmentId: e.assignmentId, expectedSource: e.source, expectedVersionId: e.versionId, expectedSha256: e.sha256, foundSha256: foundSha, missing: foundSha === null };
      await this.ctx.audit.append(tx, { ...SYSTEM_ACTOR, category: 'mirror', action: 'drift.open', entityType: 'drift', entityId: id, machine: machine.id, details });
      await this.ctx.services.get('webhooks.outbox').enqueue(tx, 'drift.opened', { driftId: id, machineId: machine.id, ...details });
      return { opened: id };
    }, { transaction: true });
  }

  /** Proof of what ran: the running program against the managed file of that name, or why it could not be read. */
  private async runningOn(link: GatewayLink, machine: FleetMachine, expected: readonly ExpectedFile[]): Promise<NonNullable<RunReport['running']> | { error: string; readAt: number }> {
    try {
      const current = await link.currentProgram(machine.machineId);
      const match = expected.find((e) => e.fileName === current.name && sameDir(e.dir, current.dir)) ?? expected.find((e) => e.fileName === current.name);
      return {
        dir: current.dir, name: current.name, sha256: current.sha256, block: current.block ?? null,
        expected: match ? { assignmentId: match.assignmentId, versionId: match.versionId, sha256: match.sha256, source: match.source } : null,
        matches: match ? match.sha256 === current.sha256 : null, readAt: this.ctx.now(),
      };
    } catch (err) {
      // A driver without a current-program read, or a machine running nothing: the files are mirrored all the same.
      return { error: (err as Error).message.slice(0, 300), readAt: this.ctx.now() };
    }
  }

  private async failed(report: RunReport, error: string): Promise<RunReport> {
    report.error = error.slice(0, 600);
    await this.repo.recordRun(report.machineId, report.at, { error: report.error, files: null, running: undefined });
    return report;
  }
}
