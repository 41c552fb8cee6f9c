/**
 * Two processes each running the gateway and the program service (as
 * `npm start` does) on one PostgreSQL database, each gateway with its own
 * simulated `L01` and `K01`: each gateway is its own fleet entry, the
 * address of each is registered for the other instance, and a deployment
 * through either instance reaches only the machine chosen, read at each
 * gateway. Then a batch held by one instance, to machines of both gateways,
 * its holder killed with SIGKILL: the other instance takes it over and
 * finishes it through the right gateways, its own in its process and the
 * killed one's at its address once that process is back. Real PostgreSQL
 * (test/fixtures/postgres.ts), real processes (test/fixtures/programs-process.ts).
 */
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../core/values/hash.js';
import { CREDENTIALS_KEY_FILE, CredentialBox } from '../../core/store/credential-box.js';
import { freePort } from '../fixtures/free-port.js';
import { startTestPostgres, type TestPostgres } from '../fixtures/postgres.js';
import { adminOf, startServiceProcess, type ServiceProcess } from '../fixtures/programs-process.js';

const DIR = '//CNC_MEM/USER/PATH1/';
const PASSWORD = 'fleet-instances-admin-password';
/** The deployments' lease of both instances, s. */
const LEASE_SEC = 3;
/** Machines of B's cell that the batch goes to; each transfer and read-back takes REQUEST_MS there, 4 at a time, so the batch lasts seconds. */
const CELL = Array.from({ length: 12 }, (_, i) => `K${String(i + 1).padStart(2, '0')}`);
const REQUEST_MS = 500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Api = Awaited<ReturnType<typeof adminOf>>;
type Row = Record<string, unknown>;
interface Instance { name: string; dataDir: string; gatewayPort: number; process: ServiceProcess; api: Api; gatewayUrl: string }

const machine = (machineID: string, requestLatencyMs = 0) => ({
  machineID, name: `Machine ${machineID}`, system: 'FANUC', model: '0i-TF', machineType: 'lathe', driver: 'simulator',
  driverOptions: { seed: 3, machineType: 'lathe', system: 'FANUC', programDir: DIR, requestLatencyMs }, tasks: { CNCStatus: { enabled: true, intervalMs: 1000 } },
});

/** The pid part of a holder id (`host:pid:random`). */
const pidOf = (holder: unknown) => Number(String(holder).split(':').at(-2));

/** The administrator's JWT per gateway address (a sign-in hashes the password at the production cost: once each). */
const tokens = new Map<string, Promise<string>>();
const tokenOf = (url: string): Promise<string> => {
  let token = tokens.get(url);
  if (!token) {
    token = fetch(`${url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: PASSWORD }) })
      .then(async (r) => ((await r.json()) as { data: { token: string } }).data.token);
    tokens.set(url, token);
  }
  return token;
};

/** A gateway's answer to an interface call, as its administrator. */
async function gatewayCall(url: string, path: string, init: RequestInit = {}): Promise<{ errorCode: number; errorMsg?: string; data?: Record<string, unknown> }> {
  const res = await fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${await tokenOf(url)}`, 'content-type': 'application/json' } });
  return (await res.json()) as { errorCode: number; data?: Record<string, unknown> };
}

/** The SHA-256 of each program named in `names` on a gateway's machine, undefined where it has none: what the machine holds, read at its gateway. */
async function held(url: string, machineID: string, names: readonly string[]): Promise<Record<string, string | undefined>> {
  const out: Record<string, string | undefined> = {};
  for (const name of names) {
    const r = await gatewayCall(url, `/api/file/program/download?machineID=${machineID}&dir=${encodeURIComponent(DIR)}&name=${name}&text=false`);
    out[name] = r.errorCode === 0 ? String(r.data?.sha256) : undefined;
  }
  return out;
}

describe('two processes each running a gateway and the program service on one PostgreSQL database', () => {
  let server: TestPostgres;
  const running: ServiceProcess[] = [];

  beforeAll(async () => {
    server = await startTestPostgres();
  }, 60_000);
  afterAll(async () => {
    for (const p of running) {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
      await p.exited;
    }
    await server?.stop();
  }, 30_000);

  /** Starts (or starts again) an instance: its own data directory and gateway port, the shared database. */
  const start = async (name: string, databaseUrl: string, dataDir: string, gatewayPort: number, machines: Record<string, unknown>[]): Promise<Instance> => {
    const configFile = join(dataDir, 'config.json');
    writeFileSync(configFile, JSON.stringify({
      roles: ['gateway', 'programs'], dataDir, timeZone: 'UTC', logLevel: 'warn', gateway: { name: `cell-${name}` },
      communication: { host: '127.0.0.1', port: gatewayPort, rateLimits: { enabled: false } }, machines,
      programs: { host: '127.0.0.1', port: 0, rateLimits: { enabled: false }, deployments: { leaseSec: LEASE_SEC } },
    }));
    const proc = await startServiceProcess(configFile, PASSWORD, { databaseUrl, roles: ['gateway', 'programs'] });
    running.push(proc);
    return { name, dataDir, gatewayPort, process: proc, api: await adminOf(proc.url, PASSWORD), gatewayUrl: proc.gatewayUrl as string };
  };

  it('PV-33 PV-35 PV-24 each gateway is its own entry; deployments through either instance reach only the machine chosen; a batch whose holder is killed is finished through the right gateways', async () => {
    const databaseUrl = await server.createDatabase();
    // One sealing key for both, as docs/operations.md says; each its own data directory and so its own gateway-id.
    const [aDir, bDir] = [mkdtempSync(join(tmpdir(), 'fleet-pg-a-')), mkdtempSync(join(tmpdir(), 'fleet-pg-b-'))];
    CredentialBox.open(aDir);
    copyFileSync(join(aDir, CREDENTIALS_KEY_FILE), join(bDir, CREDENTIALS_KEY_FILE));
    // A's K01 takes 3 s a request at first, so A's own transfer to it is under way when A is killed; A comes back with it quick.
    const aMachines = (k01LatencyMs: number) => [machine('L01'), machine('K01', k01LatencyMs)];
    const [a, b] = await Promise.all([
      start('a', databaseUrl, aDir, await freePort(), aMachines(3000)),
      start('b', databaseUrl, bDir, await freePort(), [machine('L01'), ...CELL.map((id) => machine(id, REQUEST_MS))]),
    ]);

    // Each instance added its own gateway, by the gateway's own identity.
    const identity = async (i: Instance) => String((await gatewayCall(i.gatewayUrl, '/api/system/gateway-info')).data?.gatewayID);
    const [aId, bId] = [await identity(a), await identity(b)];
    const entries = (await a.api.get('/gateways')).body.items ?? [];
    expect(entries.map((g) => [g.kind, g.gatewayID]).sort()).toEqual([['in-process', aId], ['in-process', bId]].sort());
    const entryOf = (id: string) => String(entries.find((g) => g.gatewayID === id)?.id);
    // Each gateway's address for the other instance: a secret key made on that gateway, registered through the other instance.
    for (const [i, through, id] of [[a, b, aId], [b, a, bId]] as const) {
      const key = String((await gatewayCall(i.gatewayUrl, '/api/security/secret-key/create', { method: 'POST', body: JSON.stringify({ username: 'admin', label: 'other instances' }) })).data?.key);
      const patched = await through.api.patch(`/gateways/${entryOf(id)}`, { url: i.gatewayUrl, secretKey: key });
      expect(patched.body).toMatchObject({ kind: 'in-process', url: i.gatewayUrl, gatewayID: id, reachable: true });
    }
    // Each synced its own machines at start: two L01 and two K01, one of each per gateway.
    const machines = (await a.api.get('/machines?limit=100')).body.items ?? [];
    const on = (gw: string, machineId: string) => String(machines.find((m) => m.gatewayId === entryOf(gw) && m.machineId === machineId)?.id);
    expect(machines.filter((m) => m.machineId === 'L01').map((m) => m.gatewayId).sort()).toEqual([entryOf(aId), entryOf(bId)].sort());

    const lib = String((await a.api.post('/libraries', { name: 'Lathes', approvalPolicy: { mode: 'autoRelease' } })).body.id);
    const publish = async (name: string, lines: number) => {
      const programId = String((await a.api.post('/programs', { libraryId: lib, name, controller: 'fanuc' })).body.id);
      const text = `%\n${name} (FLANGE)\n${Array.from({ length: lines }, (_, i) => `N${(i + 1) * 10} G01 X${i}. F200`).join('\n')}\nM30\n%\n`;
      const uploaded = await a.api.post(`/programs/${programId}/versions`, { contentBase64: Buffer.from(text).toString('base64'), notes: '' });
      const version = (await a.api.post(`/versions/${String(uploaded.body.id)}/submit`)).body.version as { id: string };
      return { programId, versionId: version.id, sha: sha256Hex(Buffer.from(text)) };
    };
    const deploy = async (through: Instance, p: { programId: string; versionId: string }, targets: { machineId?: string; groupId?: string; transform?: unknown }[]) => {
      const assignmentIds: string[] = [];
      for (const t of targets) assignmentIds.push(String((await through.api.post('/machine-assignments', { programId: p.programId, dir: DIR, ...t })).body.id));
      const batch = await through.api.post('/deployments', { versionId: p.versionId, assignmentIds, isTrial: false, trialHours: null });
      expect(batch.status).toBe(201);
      return { batchId: String(batch.body.batchId), ids: (batch.body.deployments as { id: string }[]).map((d) => d.id) };
    };
    const rowsOf = async (i: Instance, batchId: string): Promise<Row[]> => (await i.api.get(`/deployments?batchId=${batchId}&limit=100`)).body.items ?? [];
    const finished = async (i: Instance, batchId: string, timeoutMs: number) => {
      for (const deadline = Date.now() + timeoutMs; ; await sleep(100)) {
        const rows = await rowsOf(i, batchId);
        if (rows.length > 0 && rows.every((d) => d.finishedAt !== null)) return rows;
        if (Date.now() > deadline) throw new Error(`batch ${batchId} not finished: ${rows.map((d) => `${String(d.status)} ${String(d.reason ?? '')}`).join('; ')}`);
      }
    };

    // Through A to B's L01, through B to A's L01: each file on the L01 chosen, at its gateway, and on no other.
    const toB = await publish('O5101', 5);
    const toA = await publish('O5102', 5);
    const viaA = await deploy(a, toB, [{ machineId: on(bId, 'L01') }]);
    const viaB = await deploy(b, toA, [{ machineId: on(aId, 'L01') }]);
    for (const [i, batch] of [[a, viaA], [b, viaB]] as const) expect((await finished(i, batch.batchId, 20_000)).map((d) => d.status)).toEqual(['Succeeded']);
    expect(await held(b.gatewayUrl, 'L01', ['O5101', 'O5102'])).toEqual({ O5101: toB.sha, O5102: undefined });
    expect(await held(a.gatewayUrl, 'L01', ['O5101', 'O5102'])).toEqual({ O5101: undefined, O5102: toA.sha });

    // A batch through A to B's cell and to A's K01 (as O6001). Killed mid-way, A holds it all (the instance that stored it).
    const cell = String((await b.api.post('/machine-groups', { name: 'B cell', machineIds: CELL.map((id) => on(bId, id)) })).body.id);
    const batchProgram = await publish('O6000', 400);
    const batch = await deploy(a, batchProgram, [{ groupId: cell }, { machineId: on(aId, 'K01'), transform: { fileName: 'O6001' } }]);
    expect(batch.ids).toHaveLength(CELL.length + 1);
    let atKill: Row[];
    for (const deadline = Date.now() + 30_000; ; await sleep(25)) {
      atKill = await rowsOf(b, batch.batchId);
      const done = atKill.filter((d) => d.status === 'Succeeded').length;
      if (atKill.length === batch.ids.length && done >= 2 && done <= batch.ids.length - 6) break;
      if (done > batch.ids.length - 6 || Date.now() > deadline) throw new Error(`could not catch the batch mid-way: ${atKill.map((d) => String(d.status)).join(', ')}`);
    }
    expect(atKill.every((d) => pidOf(d.holder) === a.process.child.pid)).toBe(true);
    a.process.child.kill('SIGKILL');
    expect((await a.process.exited).signal).toBe('SIGKILL');
    const left = (await rowsOf(b, batch.batchId)).filter((d) => d.finishedAt === null).map((d) => String(d.machineId));
    // A's K01 and some of B's cell are left (which of the cell depends on the order A's transfers ran in).
    expect(left).toContain(on(aId, 'K01'));
    expect(left.some((id) => CELL.some((c) => on(bId, c) === id))).toBe(true);
    // A comes back at once on its own directory and port (the address B has for it); B holds what A left by then.
    const a2 = await start('a', databaseUrl, aDir, a.gatewayPort, aMachines(0));
    const rows = await finished(b, batch.batchId, 45_000);
    expect(rows.map((d) => [d.status, d.sha256 === d.readBackSha256])).toEqual(rows.map(() => ['Succeeded', true]));
    // What A left, B finished: its cell's in its own process, A's K01 at A's address once A was back.
    for (const d of rows) if (left.includes(String(d.machineId))) expect(pidOf(d.holder)).toBe(b.process.child.pid);
    const onCell = rows.filter((d) => d.machineId !== on(aId, 'K01'));
    // At the machines: B's cell holds O6000 and never O6001; A's K01 holds O6001 and never O6000; A's L01 and B's L01 hold neither.
    const cellSha = String(onCell[0]?.sha256);
    for (const id of CELL) expect(await held(b.gatewayUrl, id, ['O6000', 'O6001'])).toEqual({ O6000: cellSha, O6001: undefined });
    const k01 = rows.find((d) => d.machineId === on(aId, 'K01'));
    expect(await held(a2.gatewayUrl, 'K01', ['O6000', 'O6001'])).toEqual({ O6000: undefined, O6001: k01?.sha256 });
    for (const gw of [a2.gatewayUrl, b.gatewayUrl]) expect(await held(gw, 'L01', ['O6000', 'O6001'])).toEqual({ O6000: undefined, O6001: undefined });
    expect((await b.api.get('/audit/verify')).body).toMatchObject({ intact: true, firstBrokenSeq: null });
    for (const i of [b, a2]) {
      i.process.child.kill('SIGTERM');
      expect((await i.process.exited).code).toBe(0);
    }
  }, 300_000);
});
