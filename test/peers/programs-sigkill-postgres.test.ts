/**
 * Two program-service processes on one PostgreSQL database, the gateway in
 * this process reached over HTTP by both: a batch to 50 scripted machines
 * (a slow upload, every file event recorded at the machine), the instance
 * holding most of it killed with SIGKILL mid-batch. The other takes its
 * deployments over after their lease (`programs.deployments.leaseSec`, short
 * here) and finishes every one exactly once; the killed one, started again
 * on the same database, runs nothing twice. Real PostgreSQL
 * (test/fixtures/postgres.ts), real processes (test/fixtures/programs-process.ts).
 */
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../core/values/hash.js';
import { CREDENTIALS_KEY_FILE } from '../../core/store/credential-box.js';
import { PostgresDatabase } from '../../core/store/postgres-database.js';
import { startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { startTestPostgres, type TestPostgres } from '../fixtures/postgres.js';
import { adminOf, startServiceProcess, type ServiceProcess } from '../fixtures/programs-process.js';
import { DRIVERS_WITH_SCRIPTED, scriptedMachine, scriptedMachineConfig } from '../fixtures/scripted-machine.js';

const DIR = '//CNC_MEM/USER/PATH1/';
const FILE = 'O5200';
const MACHINES = Array.from({ length: 50 }, (_, i) => `pgkill-M${String(i + 1).padStart(2, '0')}`);
const PASSWORD = 'pg-kill-test-admin-password';
/** The deployments' lease of both instances, s (the documented setting; 30 s by default). */
const LEASE_SEC = 3;
/** A controller link's transfer of this file: 4 at a time per gateway, so the batch takes several seconds. */
const UPLOAD_MS = 400;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Api = Awaited<ReturnType<typeof adminOf>>;
type Row = Record<string, unknown>;
interface Instance { name: string; dataDir: string; configFile: string; process: ServiceProcess; api: Api }

/** The pid part of a holder id (`host:pid:random`). */
const pidOf = (holder: unknown) => Number(String(holder).split(':').at(-2));

describe('two program-service processes on one PostgreSQL, the holder of a batch killed with SIGKILL', () => {
  let server: TestPostgres;
  let gw: TestGateway;
  let gatewayUrl: string;
  let key: string;
  const running: ServiceProcess[] = [];

  beforeAll(async () => {
    server = await startTestPostgres();
    // Status and parts read once a second: 50 machines sampled every 100 ms would load the shared machine for nothing here.
    const machines = MACHINES.map((id) => ({ ...scriptedMachineConfig(id), tasks: { CNCStatus: { enabled: true, intervalMs: 1000 }, Count: { enabled: true, intervalMs: 1000 } } }));
    gw = await startTestGateway({ machines, groups: [{ groupID: 'pg-kill-cell', name: 'PG kill cell', machineIDs: MACHINES }] }, undefined, { drivers: DRIVERS_WITH_SCRIPTED });
    gatewayUrl = await gw.gateway.listen({ host: '127.0.0.1', port: 0 });
    key = ((await gw.request('POST', '/api/security/secret-key/create', { username: 'admin', label: 'program service' })).body.data as { key: string }).key;
    for (const id of MACHINES) scriptedMachine(id).uploadDelayMs = UPLOAD_MS;
  }, 60_000);
  afterAll(async () => {
    for (const p of running) {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
      await p.exited;
    }
    await gw?.stop();
    await server?.stop();
  }, 30_000);

  /** Starts an instance on `databaseUrl` with its own data directory (made once, reused by a restart). */
  const start = async (name: string, databaseUrl: string, dataDir = mkdtempSync(join(tmpdir(), `programs-pg-kill-${name}-`))): Promise<Instance> => {
    const configFile = join(dataDir, 'config.json');
    writeFileSync(configFile, JSON.stringify({
      roles: ['programs'], gateway: { dataDir, timeZone: 'UTC' }, logLevel: 'warn', machines: [],
      programs: { host: '127.0.0.1', port: 0, deployments: { leaseSec: LEASE_SEC } },
    }));
    const proc = await startServiceProcess(configFile, PASSWORD, { databaseUrl });
    running.push(proc);
    return { name, dataDir, configFile, process: proc, api: await adminOf(proc.url, PASSWORD) };
  };

  it('PV-24 PV-35 the other instance takes the killed holder\'s deployments over within the lease and finishes each once; the killed one, restarted, runs nothing twice', async () => {
    const databaseUrl = await server.createDatabase();
    const a = await start('a', databaseUrl);
    // The sealing key as docs/operations.md says: the first instance made it; every other gets a copy before its first start.
    const bDir = mkdtempSync(join(tmpdir(), 'programs-pg-kill-b-'));
    copyFileSync(join(a.dataDir, CREDENTIALS_KEY_FILE), join(bDir, CREDENTIALS_KEY_FILE));
    const b = await start('b', databaseUrl, bDir);

    // The gateway registered once, through A; B reads it (and unseals its key) from the database.
    const registered = await a.api.post('/gateways', { name: 'plant', url: gatewayUrl, secretKey: key });
    expect(registered.status).toBe(201);
    expect((await a.api.post(`/gateways/${registered.body.id as string}/sync`)).status).toBe(200);
    const groupId = ((await a.api.get('/machine-groups')).body.items ?? []).find((g) => g.name === 'PG kill cell')?.id as string;
    expect(typeof groupId).toBe('string');
    const lib = (await a.api.post('/libraries', { name: 'Cell', approvalPolicy: { mode: 'autoRelease' } })).body.id as string;
    const programId = (await a.api.post('/programs', { libraryId: lib, name: FILE, controller: 'fanuc' })).body.id as string;
    const text = `%\n${FILE} (BRACKET)\n${Array.from({ length: 2000 }, (_, i) => `N${(i + 1) * 10} G01 X${i}. Y${i % 50}. F300`).join('\n')}\nM30\n%\n`;
    const uploaded = await a.api.post(`/programs/${programId}/versions`, { contentBase64: Buffer.from(text).toString('base64'), notes: '' });
    const version = (await a.api.post(`/versions/${uploaded.body.id as string}/submit`)).body.version as { id: string };
    const assignment = (await a.api.post('/machine-assignments', { programId, groupId, dir: DIR })).body.id as string;

    const batch = await a.api.post('/deployments', { versionId: version.id, assignmentIds: [assignment], isTrial: false, trialHours: null });
    expect(batch.status).toBe(201);
    const batchId = batch.body.batchId as string;
    const ids = (batch.body.deployments as { id: string }[]).map((d) => d.id);
    expect(ids).toHaveLength(MACHINES.length);
    const rowsOn = async (i: Instance): Promise<Row[]> => (await i.api.get(`/deployments?batchId=${batchId}&limit=100`)).body.items ?? [];

    // Mid-batch: some finished, many not, a transfer under way. Then kill the instance holding most (its pid is in the holder id).
    let atKill: Row[] = [];
    for (const deadline = Date.now() + 60_000; ; await sleep(25)) {
      atKill = await rowsOn(b);
      const done = atKill.filter((d) => d.status === 'Succeeded').length;
      const sending = MACHINES.some((id) => scriptedMachine(id).uploadsInFlight.size > 0);
      if (atKill.length === ids.length && done >= 4 && done <= ids.length - 20 && sending) break;
      if (done > ids.length - 20 || Date.now() > deadline) throw new Error(`could not catch the batch mid-way: ${atKill.map((d) => String(d.status)).join(', ')}`);
    }
    const held = (i: Instance) => atKill.filter((d) => pidOf(d.holder) === i.process.child.pid).length;
    // A batch is held by the instance that stored it (docs/programs-deployments.md): B holds none of it until it takes some over.
    expect({ a: held(a), b: held(b) }).toEqual({ a: ids.length, b: 0 });
    const [victim, survivor] = held(a) >= held(b) ? [a, b] : [b, a];
    victim.process.child.kill('SIGKILL');
    const killedAt = Date.now();
    // The transfers the dead instance was sending break off with it: their files are not stored.
    const flyingAtKill = MACHINES.filter((id) => scriptedMachine(id).breakUploads() > 0);
    const eventsAtKill = new Map(MACHINES.map((id) => [id, scriptedMachine(id).fileEvents.length]));
    expect((await victim.process.exited).signal).toBe('SIGKILL');
    expect(flyingAtKill.length).toBeGreaterThan(0);
    // What the victim left, read once it is dead (it may have finished one more since the look above); the survivor claims nothing before the lease ends.
    const left = await rowsOn(survivor);
    expect(left.filter((d) => pidOf(d.holder) === survivor.process.child.pid)).toEqual([]);
    const unfinishedAtKill = new Map(left.filter((d) => d.finishedAt === null).map((d) => [String(d.id), String(d.status)]));
    const victimHolder = String(atKill[0]?.holder);

    // Takeover: the first deployment the victim left unfinished that the survivor moved on (a new status, or finished).
    let takeoverMs: number | undefined;
    let claimedMs: number | undefined;
    let rows: Row[];
    for (const deadline = Date.now() + 60_000; ; await sleep(50)) {
      rows = await rowsOn(survivor);
      const moved = rows.some((d) => unfinishedAtKill.has(String(d.id)) && pidOf(d.holder) === survivor.process.child.pid && (d.finishedAt !== null || d.status !== unfinishedAtKill.get(String(d.id))));
      if (moved && takeoverMs === undefined) takeoverMs = Date.now() - killedAt;
      if (claimedMs === undefined && rows.some((d) => unfinishedAtKill.has(String(d.id)) && pidOf(d.holder) === survivor.process.child.pid)) claimedMs = Date.now() - killedAt;
      if (rows.length === ids.length && rows.every((d) => d.finishedAt !== null)) break;
      if (Date.now() > deadline) throw new Error(`not finished by the survivor: ${rows.map((d) => `${String(d.status)} ${String(d.reason ?? '')}`).join('; ')}`);
    }
    const finishedMs = Date.now() - killedAt;
    process.stdout.write(`takeover after SIGKILL: ${String(takeoverMs)} ms (first claim seen ${String(claimedMs)} ms; lease ${LEASE_SEC} s); batch finished ${finishedMs} ms after the kill; ${unfinishedAtKill.size} deployments left unfinished, ${flyingAtKill.length} uploads in flight at the kill\n`);
    expect(takeoverMs).toBeDefined();
    // Within the lease plus the third of it after which the survivor looks again, and 2 s for its claim, restore and read-back.
    expect(takeoverMs).toBeLessThanOrEqual((LEASE_SEC * 4) / 3 * 1000 + 2000);

    // One final status each, the verified bytes; what the victim left was finished by the survivor.
    const sha = sha256Hex(Buffer.from(text));
    expect(rows.map((d) => [d.status, d.sha256, d.readBackSha256])).toEqual(rows.map(() => ['Succeeded', sha, sha]));
    for (const d of rows) if (unfinishedAtKill.has(String(d.id))) expect(pidOf(d.holder)).toBe(survivor.process.child.pid);
    // Counted at the machines: one upload each, or a second only where the first had not stored the file when the new holder read it back.
    const uploadsAfter = expectUploadsOnce(sha, eventsAtKill);
    expect(MACHINES.filter((id) => scriptedMachine(id).fileEvents.filter((e) => e.kind === 'upload-begun').length === 2)).toEqual(flyingAtKill);
    expect((await survivor.api.get('/audit/verify')).body).toMatchObject({ intact: true, firstBrokenSeq: null });
    const finalsAfter = await finalAuditRecords(databaseUrl);
    expect(finalsAfter).toEqual(Object.fromEntries([...ids].sort().map((id) => [id, 1])));

    // The victim started again on the same database (and data directory) joins: nothing left to do, nothing run twice.
    const restarted = await start(victim.name, databaseUrl, victim.dataDir);
    expect(restarted.process.child.pid).not.toBe(victim.process.child.pid);
    await sleep((LEASE_SEC * 4) / 3 * 1000 + 500); // past a claim pass of the restarted instance
    const again = await rowsOn(restarted);
    expect(again.map((d) => [d.id, d.status, d.holder, d.finishedAt])).toEqual(rows.map((d) => [d.id, d.status, d.holder, d.finishedAt]));
    expect(again.some((d) => d.holder === victimHolder && unfinishedAtKill.has(String(d.id)))).toBe(false);
    expect(MACHINES.map((id) => scriptedMachine(id).uploads)).toEqual(uploadsAfter);
    expect(await finalAuditRecords(databaseUrl)).toEqual(finalsAfter);
    expect((await restarted.api.get('/audit/verify')).body).toMatchObject({ intact: true, firstBrokenSeq: null });
    for (const i of [survivor, restarted]) {
      i.process.child.kill('SIGTERM');
      expect((await i.process.exited).code).toBe(0);
    }
  }, 120_000);
});

/**
 * Counted at the machines: each was sent the file once, or twice only where
 * the first transfer had not stored it when a read after the kill (the new
 * holder's read-back: events from `eventsAtKill` on) found it missing or
 * different, before the second began; each holds the verified bytes.
 * Answers the number of transfers that stored the file, per machine.
 */
function expectUploadsOnce(sha: string, eventsAtKill: Map<string, number>): number[] {
  return MACHINES.map((id) => {
    const m = scriptedMachine(id);
    const events = m.fileEvents.map((e, i) => ({ ...e, afterKill: i >= (eventsAtKill.get(id) ?? 0) })).filter((e) => e.key === `${DIR}${FILE}`);
    const shown = `${id}: ${JSON.stringify(events.map(({ kind, afterKill, sha256 }) => ({ kind, afterKill, found: sha256 === sha })))}`;
    const begun = events.flatMap((e, i) => (e.kind === 'upload-begun' ? [i] : []));
    const stored = events.flatMap((e, i) => (e.kind === 'upload-stored' ? [i] : []));
    expect({ id, uploads: m.uploads, held: sha256Hex(m.files.get(`${DIR}${FILE}`) ?? '') }, shown).toEqual({ id, uploads: stored.length, held: sha });
    expect([1, 2], shown).toContain(begun.length);
    if (begun.length === 2) {
      const second = begun[1]!;
      const missed = events.findIndex((e, i) => e.kind === 'read' && e.afterKill && e.sha256 !== sha && i < second);
      const firstStoredBefore = stored.some((i) => i < missed);
      expect({ missed: missed >= 0, firstStoredBefore }, shown).toEqual({ missed: true, firstStoredBefore: false });
    }
    return m.uploads;
  });
}

/** The final audit records (succeeded or failed) per deployment, read from the shared database. */
async function finalAuditRecords(databaseUrl: string): Promise<Record<string, number>> {
  const db = await PostgresDatabase.open(databaseUrl, { max: 1 });
  try {
    const rows = await db.all<{ entity_id: string; n: number }>(
      "SELECT entity_id, COUNT(*) AS n FROM audit_log WHERE action IN ('deployment.succeeded', 'deployment.failed') GROUP BY entity_id ORDER BY entity_id",
    );
    return Object.fromEntries(rows.map((r) => [r.entity_id, Number(r.n)]));
  } finally {
    await db.close();
  }
}
