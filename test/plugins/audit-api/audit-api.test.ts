/**
 * The audit endpoints over real HTTP: filters, paging, CSV export, and
 * verify after the database was tampered with behind the service's back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditApiPlugin } from '../../../plugins/audit-api/index.js';
import { vaultPlugin } from '../../../plugins/vault/index.js';
import { parseCsv } from '../../fixtures/csv.js';
import type { WriteTx } from '../../../core/store/sql-database.js';
import { openProgramsDatabase, startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, userSession, type Session } from '../../fixtures/programs-accounts.js';

/** What someone with the database's owner rights can do: drop the append-only guards (SQLite's triggers, PostgreSQL's trigger). */
async function dropAppendOnlyGuards(tx: WriteTx): Promise<void> {
  if (tx.dialect.engine === 'postgres') {
    await tx.run('DROP TRIGGER audit_log_append_only ON audit_log');
    return;
  }
  await tx.run('DROP TRIGGER audit_log_no_update');
  await tx.run('DROP TRIGGER audit_log_no_delete');
}

describe('audit endpoints', () => {
  let svc: TestProgramService;
  let admin: Session;
  let auditor: Session;
  let programmer: Session;
  const clock = { now: Date.UTC(2026, 10, 23, 22, 30, 0) };

  beforeAll(async () => {
    // Europe/Berlin: 2026-11-23T22:30Z is already 2026-11-23 23:30 local; an hour later it is the 24th there.
    svc = await startTestProgramService({ plugins: [TEST_ACCOUNTS, vaultPlugin, auditApiPlugin], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, now: () => clock.now, timeZone: 'Europe/Berlin' });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    auditor = await userSession(svc, admin, 'audit.eve', 'auditor');
    programmer = await userSession(svc, admin, 'cam.anna', 'programmer');
    clock.now += 60 * 60_000;
    const lib = await svc.request('POST', '/api/v1/libraries', { cookie: admin.cookie, headers: admin.headers, body: { name: 'Quoted, "odd" name', approvalPolicy: { mode: 'autoRelease' } } });
    expect(lib.status).toBe(201);
    const prg = await svc.request('POST', '/api/v1/programs', { cookie: programmer.cookie, headers: { ...programmer.headers, 'x-on-behalf-of': 'Anna Operator' }, body: { libraryId: lib.body.id, name: '=HYPERLINK()', controller: 'fanuc' } });
    expect(prg.status).toBe(201);
    await svc.request('PATCH', `/api/v1/programs/${prg.body.id}`, { cookie: programmer.cookie, headers: programmer.headers, body: { description: 'first line\r\nsecond, "quoted" line' } });
    // Records naming a machine, appended through the service's own chain in a write transaction, as deployments write them.
    const { db, audit } = svc.role.context;
    await db.write(async (tx) => {
      await audit.append(tx, { principalName: 'mes-line-2', onBehalfOf: 'Olaf Operator', authMethod: 'serviceToken', category: 'deploy', action: 'deployment.create', entityType: 'deployment', entityId: 'dep_1', machine: 'M-07', details: { note: 'spindle 1, "warm"\nline two' } });
      await audit.append(tx, { principalName: 'mes-line-2', onBehalfOf: null, authMethod: 'serviceToken', category: 'deploy', action: 'deployment.create', entityType: 'deployment', entityId: 'dep_2', machine: '=SUM(A1)', details: null });
      await audit.append(tx, { principalName: 'mes-line-2', onBehalfOf: null, authMethod: 'serviceToken', category: 'deploy', action: 'deployment.create', entityType: 'deployment', entityId: 'dep_3', machine: 'Bay 2, "north"\r\nrow 3', details: { lines: ['a', 'b'] } });
    }, { transaction: true });
  });
  afterAll(() => svc.stop());

  it('PV-39 PV-40 GET /audit filters by principalName, machine, entityType, entityId, category and to (an exclusive instant), newest first, with paging', async () => {
    const all = await svc.request('GET', '/api/v1/audit?limit=1000', { cookie: auditor.cookie });
    expect(all.status).toBe(200);
    const seqs = all.body.items.map((r: { seq: number }) => r.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    const byAnna = await svc.request('GET', '/api/v1/audit?principalName=cam.anna', { cookie: auditor.cookie });
    expect(byAnna.body.items.length).toBeGreaterThan(0);
    expect(byAnna.body.items.every((r: { principalName: string }) => r.principalName === 'cam.anna')).toBe(true);
    const create = byAnna.body.items.find((r: { action: string }) => r.action === 'program.create');
    expect(create).toMatchObject({ onBehalfOf: 'Anna Operator', authMethod: 'session', category: 'vault', entityType: 'program' });
    const byEntity = await svc.request('GET', `/api/v1/audit?entityType=program&entityId=${create.entityId}`, { cookie: auditor.cookie });
    expect(byEntity.body.items.map((r: { action: string }) => r.action)).toEqual(['program.update', 'program.create']);
    expect(byEntity.body.items.every((r: { entityId: string }) => r.entityId === create.entityId)).toBe(true);
    const byCategory = await svc.request('GET', '/api/v1/audit?category=admin', { cookie: auditor.cookie });
    expect(byCategory.body.items.map((r: { action: string }) => r.action)).toEqual(expect.arrayContaining(['user.create']));
    const byMachine = await svc.request('GET', '/api/v1/audit?machine=M-07', { cookie: auditor.cookie });
    expect(byMachine.body.items).toEqual([expect.objectContaining({ machine: 'M-07', entityId: 'dep_1', onBehalfOf: 'Olaf Operator', details: { note: 'spindle 1, "warm"\nline two' } })]);
    expect(byMachine.body.items[0].hash).toMatch(/^[0-9a-f]{64}$/);
    const combined = await svc.request('GET', '/api/v1/audit?category=deploy&principalName=mes-line-2&entityType=deployment&entityId=dep_2', { cookie: auditor.cookie });
    expect(combined.body.items.map((r: { machine: string }) => r.machine)).toEqual(['=SUM(A1)']);
    const none = await svc.request('GET', '/api/v1/audit?category=deploy&principalName=cam.anna', { cookie: auditor.cookie });
    expect(none.body).toEqual({ items: [], nextCursor: null });
    // `to` as an instant is exclusive: the records stamped exactly at it are left out.
    const lastTime = all.body.items[0].time as string;
    const before = await svc.request('GET', `/api/v1/audit?to=${encodeURIComponent(lastTime)}&limit=1000`, { cookie: auditor.cookie });
    expect(before.body.items.length).toBeGreaterThan(0);
    expect(before.body.items.every((r: { time: string }) => r.time < lastTime)).toBe(true);
    expect(before.body.items.length).toBe(all.body.items.filter((r: { time: string }) => r.time < lastTime).length);
    const tooLong = await svc.request('GET', `/api/v1/audit?machine=${'m'.repeat(1025)}`, { cookie: auditor.cookie });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.errors[0].field).toBe('query.machine');
    const paged: number[] = [];
    let cursor: string | null = null;
    do {
      const res: Awaited<ReturnType<TestProgramService['request']>> = await svc.request('GET', `/api/v1/audit?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { cookie: auditor.cookie });
      paged.push(...res.body.items.map((r: { seq: number }) => r.seq));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(paged).toEqual(seqs);
    const badCursor = await svc.request('GET', '/api/v1/audit?cursor=zzzz', { cookie: auditor.cookie });
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.errors[0].field).toBe('query.cursor');
  });

  it('PV-41 from and to take a calendar date read in the service time zone', async () => {
    const day23 = await svc.request('GET', '/api/v1/audit?from=2026-11-23&to=2026-11-23&limit=1000', { cookie: auditor.cookie });
    const day24 = await svc.request('GET', '/api/v1/audit?from=2026-11-24&limit=1000', { cookie: auditor.cookie });
    // Setup before the clock moved: 23:30 Berlin on the 23rd; after: 00:30 Berlin on the 24th (still the 23rd in UTC).
    expect(day23.body.items.length).toBeGreaterThan(0);
    expect(day24.body.items.length).toBeGreaterThan(0);
    expect(day23.body.items.every((r: { time: string }) => r.time < '2026-11-23T23:00:00.000Z')).toBe(true);
    expect(day24.body.items.every((r: { time: string }) => r.time >= '2026-11-23T23:00:00.000Z')).toBe(true);
    const instant = await svc.request('GET', '/api/v1/audit?from=2026-11-23T23:00:00Z&limit=1000', { cookie: auditor.cookie });
    expect(instant.body.items.length).toBe(day24.body.items.length);
    const bad = await svc.request('GET', '/api/v1/audit?from=last%20tuesday', { cookie: auditor.cookie });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('query.from');
    expect(bad.body.detail).toMatch(/calendar date YYYY-MM-DD/);
    expect(bad.body.errors[0].accepted).toMatch(/calendar date YYYY-MM-DD .* or an ISO-8601 instant with an offset/);
    const noSuchDay = await svc.request('GET', '/api/v1/audit?to=2026-02-30', { cookie: auditor.cookie });
    expect(noSuchDay.status).toBe(400);
    expect(noSuchDay.body.errors[0]).toMatchObject({ field: 'query.to', accepted: expect.stringMatching(/YYYY-MM-DD/) });
    const backwards = await svc.request('GET', '/api/v1/audit?from=2026-11-24&to=2026-11-20', { cookie: auditor.cookie });
    expect(backwards.status).toBe(400);
    expect(backwards.body.errors[0].field).toBe('query.to');
  });

  it('PV-40 GET /audit/export?format=csv streams the same selection as RFC 4180 CSV, quoting commas, quotes and newlines', async () => {
    const res = await svc.request('GET', '/api/v1/audit/export?format=csv&category=vault', { cookie: auditor.cookie });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    // The clock stands at 2026-11-23T23:30Z: already the 24th in Berlin, the service's zone.
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="audit-2026-11-24.csv"');
    const rows = parseCsv(res.text);
    expect(rows[0]).toEqual(['seq', 'time', 'principalName', 'onBehalfOf', 'authMethod', 'category', 'action', 'entityType', 'entityId', 'machine', 'details', 'prevHash', 'hash']);
    const json = await svc.request('GET', '/api/v1/audit?category=vault&order=oldest', { cookie: auditor.cookie });
    expect(rows.slice(1).map((r) => Number(r[0]))).toEqual(json.body.items.map((r: { seq: number }) => r.seq));
    const libraryRow = rows.find((r) => r[6] === 'library.create') as string[];
    expect(JSON.parse(libraryRow[10] as string).name).toBe('Quoted, "odd" name');
    const updateRow = rows.find((r) => r[6] === 'program.update') as string[];
    expect(JSON.parse(updateRow[10] as string).description).toBe('first line\r\nsecond, "quoted" line');
    const createRow = rows.find((r) => r[6] === 'program.create') as string[];
    expect(JSON.parse(createRow[10] as string).name).toBe('=HYPERLINK()');
    // The raw text quotes exactly the fields holding a comma, a quote or a line break, doubling the quotes.
    expect(res.text).toContain(`,"${(libraryRow[10] as string).replaceAll('"', '""')}",`);
    expect(res.text).toContain('\\r\\n');
    const machine = await svc.request('GET', '/api/v1/audit/export?format=csv&machine=M-07', { cookie: auditor.cookie });
    const machineRows = parseCsv(machine.text);
    expect(machineRows).toHaveLength(2);
    expect(machineRows[1]?.slice(6, 11)).toEqual(['deployment.create', 'deployment', 'dep_1', 'M-07', '{"note":"spindle 1, \\"warm\\"\\nline two"}']);
    expect(machine.text).toContain(',"{""note"":""spindle 1, \\""warm\\""\\nline two""}",');
    // A raw line break (and comma and quote) in a text field: the whole field quoted, the CRLF kept inside it.
    const bay = await svc.request('GET', `/api/v1/audit/export?format=csv&machine=${encodeURIComponent('Bay 2, "north"\r\nrow 3')}`, { cookie: auditor.cookie });
    expect(bay.text).toContain(',dep_3,"Bay 2, ""north""\r\nrow 3","{""lines"":[""a"",""b""]}",');
    expect(parseCsv(bay.text)[1]?.slice(8, 11)).toEqual(['dep_3', 'Bay 2, "north"\r\nrow 3', '{"lines":["a","b"]}']);
    // A cell a spreadsheet would run as a formula gets a leading quote.
    const formula = parseCsv((await svc.request('GET', '/api/v1/audit/export?format=csv&entityId=dep_2', { cookie: auditor.cookie })).text);
    expect(formula[1]?.[9]).toBe("'=SUM(A1)");
    expect(formula[1]?.[10]).toBe('');
    const missing = await svc.request('GET', '/api/v1/audit/export?category=vault', { cookie: auditor.cookie });
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0]).toMatchObject({ field: 'query.format', accepted: 'csv' });
    const wrong = await svc.request('GET', '/api/v1/audit/export?format=xlsx', { cookie: auditor.cookie });
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors[0]).toMatchObject({ field: 'query.format', accepted: 'csv' });
    const badFilter = await svc.request('GET', '/api/v1/audit/export?format=csv&to=2026-13-01', { cookie: auditor.cookie });
    expect(badFilter.status).toBe(400);
    expect(badFilter.headers.get('content-type')).toMatch(/problem\+json/);
    expect(badFilter.body.errors[0]).toMatchObject({ field: 'query.to', accepted: expect.stringMatching(/YYYY-MM-DD/) });
  });

  it('PV-39 PV-54 an auditor (session or service token) may read the audit; a programmer gets 403 and no credentials 401', async () => {
    const created = await svc.request('POST', '/api/v1/admin/service-tokens', { cookie: admin.cookie, headers: admin.headers, body: { name: 'audit reader', role: 'auditor' } });
    expect(created.status).toBe(201);
    const paths = ['/api/v1/audit', '/api/v1/audit/export?format=csv', '/api/v1/audit/verify'];
    for (const path of paths) {
      expect((await svc.request('GET', path, { cookie: auditor.cookie })).status).toBe(200);
      expect((await svc.request('GET', path, { token: created.body.token })).status).toBe(200);
      expect((await svc.request('GET', path, { cookie: admin.cookie })).status).toBe(200);
      const refused = await svc.request('GET', path, { cookie: programmer.cookie });
      expect(refused.status).toBe(403);
      expect(refused.body.type).toMatch(/forbidden$/);
      expect((await svc.request('GET', path)).status).toBe(401);
    }
  });

  it('PV-15 verify answers intact, checked and firstBrokenSeq null, then names the first broken seq after a record was changed', async () => {
    const intact = await svc.request('GET', '/api/v1/audit/verify', { cookie: auditor.cookie });
    expect(intact.body).toEqual({ intact: true, checked: expect.any(Number), firstBrokenSeq: null });
    const total = intact.body.checked as number;
    expect(total).toBeGreaterThan(6);
    const db = await openProgramsDatabase(svc.dataDir);
    const verify = async () => (await svc.request('GET', '/api/v1/audit/verify', { cookie: auditor.cookie })).body;
    try {
      // Someone with the file can drop the append-only triggers; verify is what catches them.
      await db.write((tx) => dropAppendOnlyGuards(tx));
      const tamper = (sql: string) => db.write((tx) => tx.run(sql));
      await tamper("UPDATE audit_log SET principal_name = 'mallory' WHERE seq = 5");
      expect(await verify()).toEqual({ intact: false, checked: 4, firstBrokenSeq: 5 });
    } finally {
      await db.close();
    }
  });

  it('PV-15 verify names the first broken seq after a deleted row, two swapped rows and a changed hash', async () => {
    const cases: [string, string[], number][] = [
      ['a deleted row', ['DELETE FROM audit_log WHERE seq = 3'], 3],
      ['two swapped rows', ['UPDATE audit_log SET seq = -1 WHERE seq = 2', 'UPDATE audit_log SET seq = 2 WHERE seq = 3', 'UPDATE audit_log SET seq = 3 WHERE seq = -1'], 2],
      ['a changed hash', ["UPDATE audit_log SET hash = '0000000000000000000000000000000000000000000000000000000000000000' WHERE seq = 4"], 4],
    ];
    for (const [name, statements, expected] of cases) {
      const fresh = await startTestProgramService({ plugins: [TEST_ACCOUNTS, auditApiPlugin], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD } });
      try {
        const s = await login(fresh, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
        for (let i = 0; i < 4; i++) await login(fresh, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
        expect((await fresh.request('GET', '/api/v1/audit/verify', { cookie: s.cookie })).body.intact).toBe(true);
        const db = await openProgramsDatabase(fresh.dataDir);
        try {
          await db.write(async (tx) => {
            await dropAppendOnlyGuards(tx);
            for (const sql of statements) await tx.run(sql);
          }, { transaction: true });
        } finally {
          await db.close();
        }
        const res = await fresh.request('GET', '/api/v1/audit/verify', { cookie: s.cookie });
        expect({ name, ...res.body }).toEqual({ name, intact: false, checked: expected - 1, firstBrokenSeq: expected });
      } finally {
        await fresh.stop();
      }
    }
  });

  it('PV-15 a service restarted on a tampered file still names the first broken seq, and new records do not hide it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'audit-api-'));
    const options = { plugins: [TEST_ACCOUNTS, auditApiPlugin], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, dataDir };
    try {
      let service = await startTestProgramService(options);
      let before: number;
      try {
        let s = await login(service, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
        for (let i = 0; i < 4; i++) s = await login(service, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
        before = (await service.request('GET', '/api/v1/audit/verify', { cookie: s.cookie })).body.checked;
        expect(before).toBeGreaterThanOrEqual(5);
      } finally {
        await service.stop();
      }
      const db = await openProgramsDatabase(dataDir);
      try {
        await db.write(async (tx) => {
          await dropAppendOnlyGuards(tx);
          await tx.run("UPDATE audit_log SET details = '{\"forged\":true}' WHERE seq = 2");
        }, { transaction: true });
      } finally {
        await db.close();
      }
      service = await startTestProgramService(options);
      try {
        const s = await login(service, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
        expect((await service.request('GET', '/api/v1/audit/verify', { cookie: s.cookie })).body).toEqual({ intact: false, checked: 1, firstBrokenSeq: 2 });
        const records = await service.request('GET', '/api/v1/audit?order=oldest', { cookie: s.cookie });
        // The login after the restart continues the chain; the forged record stays where it was.
        expect(records.body.items.map((r: { seq: number }) => r.seq)).toEqual(Array.from({ length: before + 1 }, (_, i) => i + 1));
        expect(records.body.items[before].action).toBe('login');
        expect(records.body.items[1].details).toEqual({ forged: true });
      } finally {
        await service.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
