import { afterEach, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { Database } from '../../../core/store/database.js';
import { migrateGatewayStore as migrate } from '../../../core/roles/gateway/store/schema.js';

const CONTROLLER_PASSWORD = 'Ctrl-Pass-5150-xyzzy';
const FILE_SERVER_PASSWORD = 'Ftp-Pass-7777-plugh';
const onWindows = process.platform === 'win32';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

function freshDir(): string {
  return mkdtempSync(join(tmpdir(), 'gw-secrets-'));
}

/** The bytes of the database and its WAL, as a copy of the data directory would hold them. */
function databaseBytes(dataDir: string): Buffer {
  const files = ['gateway.db', 'gateway.db-wal'].map((f) => join(dataDir, f)).filter((f) => existsSync(f));
  return Buffer.concat(files.map((f) => readFileSync(f)));
}

async function storedMachineRows(dataDir: string): Promise<Record<string, Record<string, unknown>>> {
  const db = await Database.open(join(dataDir, 'gateway.db'));
  try {
    const rows = await db.all<{ machine_id: string; config: string }>('SELECT machine_id, config FROM machines');
    return Object.fromEntries(rows.map((r) => [r.machine_id, JSON.parse(r.config) as Record<string, unknown>]));
  } finally {
    await db.close();
  }
}

async function rewriteMachineRow(dataDir: string, machineID: string, edit: (row: Record<string, unknown>) => void): Promise<void> {
  const db = await Database.open(join(dataDir, 'gateway.db'));
  try {
    const row = await db.get<{ config: string }>('SELECT config FROM machines WHERE machine_id = ?', [machineID]);
    const config = JSON.parse(row!.config) as Record<string, unknown>;
    edit(config);
    await db.write((tx) => tx.run('UPDATE machines SET config = ? WHERE machine_id = ?', [JSON.stringify(config), machineID]));
  } finally {
    await db.close();
  }
}

/** Starts a gateway, adds machine M with both credentials through the API, and stops it. */
async function dataDirWithCredentials(): Promise<string> {
  const g = await startTestGateway({}, freshDir());
  const res = await g.request('POST', '/api/config/machine/add', simMachine('M', { password: CONTROLLER_PASSWORD, fileServerPassword: FILE_SERVER_PASSWORD }));
  expect(res.status).toBe(200);
  await g.stop();
  return g.dataDir;
}

describe('machine credentials at rest', () => {
  it('credentials added through the API are in neither the database file nor machines.config, and decrypt after a restart', async () => {
    gw = await startTestGateway({}, freshDir());
    const added = await gw.request('POST', '/api/config/machine/add', simMachine('M', { password: CONTROLLER_PASSWORD, fileServerPassword: FILE_SERVER_PASSWORD }));
    expect(added.status).toBe(200);
    expect(added.raw).not.toContain(CONTROLLER_PASSWORD);
    // While running (pages in the WAL) and after the stop (checkpointed into the main file).
    for (const secret of [CONTROLLER_PASSWORD, FILE_SERVER_PASSWORD]) expect(databaseBytes(gw.dataDir).includes(secret)).toBe(false);
    const dataDir = gw.dataDir;
    await gw.stop();
    gw = undefined;
    const bytes = databaseBytes(dataDir);
    expect(bytes.includes('"machineID":"M"')).toBe(true);
    for (const secret of [CONTROLLER_PASSWORD, FILE_SERVER_PASSWORD]) expect(bytes.includes(secret)).toBe(false);
    const row = (await storedMachineRows(dataDir)).M!;
    expect(JSON.stringify(row)).not.toContain(CONTROLLER_PASSWORD);
    expect(JSON.stringify(row)).not.toContain(FILE_SERVER_PASSWORD);
    expect(row.password).toMatchObject({ alg: 'aes-256-gcm', iv: expect.any(String), data: expect.any(String), tag: expect.any(String) });
    expect(row.fileServerPassword).toMatchObject({ alg: 'aes-256-gcm' });

    gw = await startTestGateway({}, dataDir);
    const m = gw.gateway.context.store.getMachine('M');
    expect([m.password, m.fileServerPassword]).toEqual([CONTROLLER_PASSWORD, FILE_SERVER_PASSWORD]);
    const shown = await gw.request('GET', '/api/config/machine?machineID=M');
    expect(shown.body.data).toMatchObject({ passwordSet: true, fileServerPasswordSet: true });
    expect(shown.raw).not.toContain(CONTROLLER_PASSWORD);
  });

  it('each value gets its own IV: the same password twice gives different ciphertexts', async () => {
    gw = await startTestGateway({}, freshDir());
    await gw.request('POST', '/api/config/machine/add', simMachine('M', { password: CONTROLLER_PASSWORD, fileServerPassword: CONTROLLER_PASSWORD }));
    const dataDir = gw.dataDir;
    await gw.stop();
    gw = undefined;
    const row = (await storedMachineRows(dataDir)).M as { password: { iv: string; data: string }; fileServerPassword: { iv: string; data: string } };
    expect(row.password.iv).not.toBe(row.fileServerPassword.iv);
    expect(row.password.data).not.toBe(row.fileServerPassword.data);
  });

  it.skipIf(onWindows)('the data directory is 0700 and its files 0600, on first start and tightened on a later start', async () => {
    const dataDir = join(freshDir(), 'data');
    gw = await startTestGateway({}, dataDir);
    await gw.request('POST', '/api/config/machine/add', simMachine('M', { password: CONTROLLER_PASSWORD }));
    const files = ['gateway.db', 'gateway.db-wal', 'gateway.db-shm', 'jwt-signing.key', 'credentials.key', 'gateway-id'];
    const modes = () => ({ dir: statSync(dataDir).mode & 0o777, ...Object.fromEntries(files.map((f) => [f, statSync(join(dataDir, f)).mode & 0o777])) });
    const tight = { dir: 0o700, ...Object.fromEntries(files.map((f) => [f, 0o600])) };
    expect(modes()).toEqual(tight);
    await gw.stop();
    gw = undefined;
    // As an older version left them: world-readable.
    chmodSync(dataDir, 0o755);
    for (const f of ['gateway.db', 'jwt-signing.key', 'credentials.key', 'gateway-id']) chmodSync(join(dataDir, f), 0o644);
    gw = await startTestGateway({}, dataDir);
    expect(modes()).toEqual(tight);
  });

  it('a tampered ciphertext stops the start with an error naming the machine and the field', async () => {
    const dataDir = await dataDirWithCredentials();
    await rewriteMachineRow(dataDir, 'M', (row) => {
      const sealed = row.password as { data: string };
      const data = Buffer.from(sealed.data, 'base64');
      data[0] = data[0]! ^ 0x01;
      sealed.data = data.toString('base64');
    });
    await expect(startTestGateway({}, dataDir)).rejects.toThrow(/machine 'M' password[\s\S]*credentials\.key/);
  });

  it("a ciphertext moved onto another machine's row does not decrypt (the machineID is authenticated)", async () => {
    const dataDir = await dataDirWithCredentials();
    const g = await startTestGateway({}, dataDir);
    await g.request('POST', '/api/config/machine/add', simMachine('N'));
    await g.stop();
    const stolen = (await storedMachineRows(dataDir)).M!.password;
    await rewriteMachineRow(dataDir, 'N', (row) => (row.password = stolen));
    await expect(startTestGateway({}, dataDir)).rejects.toThrow(/machine 'N' password/);
  });

  it('a wrong or missing credentials.key stops the start naming every credential; the config can replace them', async () => {
    const dataDir = await dataDirWithCredentials();
    const keyFile = join(dataDir, 'credentials.key');
    const original = readFileSync(keyFile, 'utf8');
    const wrong = randomBytes(32).toString('base64');
    writeFileSync(keyFile, wrong);
    const error = await startTestGateway({}, dataDir).then(
      () => new Error('started'),
      (err: Error) => err,
    );
    expect(error.message).toMatch(/machine 'M' password/);
    expect(error.message).toMatch(/machine 'M' fileServerPassword/);
    expect(error.message).not.toContain(CONTROLLER_PASSWORD);
    expect(readFileSync(keyFile, 'utf8')).toBe(wrong);

    // A missing key: the error says so, and no new key is left behind to be confused with the original.
    rmSync(keyFile);
    await expect(startTestGateway({}, dataDir)).rejects.toThrow(/credentials\.key did not exist/);
    expect(existsSync(keyFile)).toBe(false);

    // The config file's values replace credentials that cannot be read.
    writeFileSync(keyFile, wrong);
    gw = await startTestGateway({ machines: [simMachine('M', { password: 'new-controller-pw', fileServerPassword: 'new-ftp-pw' })] }, dataDir);
    expect(gw.gateway.context.store.getMachine('M').password).toBe('new-controller-pw');
    expect(gw.gateway.context.announcements.join('\n')).toMatch(/updated 1 \(M: .*password, fileServerPassword/);
    await gw.stop();
    gw = undefined;

    // The original key no longer opens them; the new one does.
    writeFileSync(keyFile, original);
    await expect(startTestGateway({}, dataDir)).rejects.toThrow(/machine 'M' password/);
    writeFileSync(keyFile, wrong);
    gw = await startTestGateway({}, dataDir);
    expect(gw.gateway.context.store.getMachine('M').fileServerPassword).toBe('new-ftp-pw');
  });

  it('plain-text credentials written by the previous version are encrypted when the store opens', async () => {
    const dataDir = freshDir();
    mkdirSync(dataDir, { recursive: true });
    // The previous version stored the machine's config as it came, credentials included.
    const legacy = await Database.open(join(dataDir, 'gateway.db'));
    await migrate(legacy);
    const config = { ...simMachine('OLD'), password: CONTROLLER_PASSWORD, fileServerPassword: FILE_SERVER_PASSWORD };
    await legacy.write((tx) => tx.run('INSERT INTO machines (machine_id, config, created_at, updated_at) VALUES (?, ?, ?, ?)', ['OLD', JSON.stringify(config), 1, 1]));
    await legacy.close();
    expect(databaseBytes(dataDir).includes(CONTROLLER_PASSWORD)).toBe(true);

    gw = await startTestGateway({}, dataDir);
    const m = gw.gateway.context.store.getMachine('OLD');
    expect([m.password, m.fileServerPassword]).toEqual([CONTROLLER_PASSWORD, FILE_SERVER_PASSWORD]);
    expect(gw.gateway.context.announcements.join('\n')).toContain('encrypted the credentials of 1 machine(s) stored in plain text by an earlier version: OLD');
    // Already scrubbed while running, not only after the stop.
    for (const secret of [CONTROLLER_PASSWORD, FILE_SERVER_PASSWORD]) expect(databaseBytes(dataDir).includes(secret)).toBe(false);
    await gw.stop();
    gw = undefined;
    for (const secret of [CONTROLLER_PASSWORD, FILE_SERVER_PASSWORD]) expect(databaseBytes(dataDir).includes(secret)).toBe(false);
    expect((await storedMachineRows(dataDir)).OLD!.password).toMatchObject({ alg: 'aes-256-gcm' });

    gw = await startTestGateway({}, dataDir);
    expect(gw.gateway.context.store.getMachine('OLD').password).toBe(CONTROLLER_PASSWORD);
    expect(gw.gateway.context.announcements.join('\n')).not.toContain('encrypted');
  });
});
