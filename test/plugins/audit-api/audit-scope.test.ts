/**
 * The audit as a scoped caller reads it (PV-54): over real HTTP, on a plant
 * of two libraries and two machine groups with real programs, deployments,
 * accounts and webhooks, a caller limited to library A and group A reads
 * only the records about objects it can see, page by page and in the
 * export, while verify still walks the whole chain.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessGatewayLink } from '../../../core/gateway-link/in-process.js';
import { assignmentsPlugin } from '../../../plugins/assignments/index.js';
import { auditApiPlugin } from '../../../plugins/audit-api/index.js';
import { deploymentsPlugin } from '../../../plugins/deployments/index.js';
import { gatewaysPlugin } from '../../../plugins/gateways/index.js';
import { vaultPlugin } from '../../../plugins/vault/index.js';
import { webhooksPlugin } from '../../../plugins/webhooks/index.js';
import { parseCsv } from '../../fixtures/csv.js';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { openProgramsDatabase, startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, userSession, type Session } from '../../fixtures/programs-accounts.js';
import { scopedPlant } from '../../fixtures/scoped-plant.js';

interface AuditItem {
  seq: number;
  action: string;
  entityType: string | null;
  details: Record<string, unknown> | null;
  entityId: string | null;
  machine: string | null;
}

describe('audit in scope', () => {
  let gw: TestGateway;
  let svc: TestProgramService;
  let admin: Session;
  /** An administrator of library A and machine group A. */
  let scoped: Session;
  /** An auditor of every library but machine group A only. */
  let cellAuditor: Session;
  /** What the test made, by the part of the plant it belongs to. */
  const made = { a: new Set<string>(), b: new Set<string>() };
  const accounts = { within: new Set<string>(), beyond: new Set<string>() };
  let deletedProgram: string;
  let auditorId: string;
  let scopedHook: string;
  let reviewedA: string;

  const get = (session: Session, path: string) => svc.request('GET', path, { cookie: session.cookie });
  const all = async (session: Session, query = ''): Promise<AuditItem[]> => {
    const res = await get(session, `/api/v1/audit?limit=1000${query}`);
    expect(res.status).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    return res.body.items as AuditItem[];
  };

  beforeAll(async () => {
    gw = await startTestGateway({ machines: [simMachine('M01'), simMachine('M02')] });
    svc = await startTestProgramService({
      plugins: [TEST_ACCOUNTS, vaultPlugin, auditApiPlugin, gatewaysPlugin, assignmentsPlugin, deploymentsPlugin, webhooksPlugin],
      env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, localGateway: new InProcessGatewayLink(gw.gateway.context.interfaces),
    });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    const plant = await scopedPlant(svc, admin);
    made.a.add(plant.libraryA).add(plant.groupA).add(plant.machineA);
    made.b.add(plant.libraryB).add(plant.groupB).add(plant.machineB);
    const onA = await plant.publish(plant.libraryA, 'SHAFT');
    const onB = await plant.publish(plant.libraryB, 'FLANGE');
    made.a.add(onA.programId).add(onA.versionId);
    made.b.add(onB.programId).add(onB.versionId);
    for (const [release, machine, part] of [[onA, plant.machineA, made.a], [onB, plant.machineB, made.b]] as const) {
      const d = await plant.deploy(release, machine);
      part.add(d.assignmentId).add(d.batchId).add(d.deploymentId);
    }
    // A program of library A deleted with its draft: its records stay library A's.
    const gone = (await svc.request('POST', '/api/v1/programs', { cookie: admin.cookie, headers: admin.headers, body: { libraryId: plant.libraryA, name: 'SCRAP', controller: 'fanuc' } })).body.id;
    const draft = (await svc.request('POST', `/api/v1/programs/${gone}/versions`, { cookie: admin.cookie, headers: admin.headers, body: { contentBase64: Buffer.from('%\nO7001\nM30\n%\n').toString('base64'), notes: '' } })).body.id;
    await svc.request('PATCH', `/api/v1/programs/${gone}`, { cookie: admin.cookie, headers: admin.headers, body: { description: 'not needed' } });
    expect((await svc.request('DELETE', `/api/v1/programs/${gone}`, { cookie: admin.cookie, headers: admin.headers })).status).toBe(204);
    made.a.add(gone).add(draft);
    deletedProgram = gone;
    // Libraries that need an approval: a version waiting for one on each side, and on each side a program
    // deleted with its submitted version, whose approval record stays its library's.
    for (const [name, part] of [['Reviewed A', made.a], ['Reviewed B', made.b]] as const) {
      const call = async (method: string, path: string, body?: unknown) => (await svc.request(method, path, { cookie: admin.cookie, headers: admin.headers, ...(body !== undefined ? { body } : {}) })).body;
      const library = (await call('POST', '/api/v1/libraries', { name })).id as string;
      part.add(library);
      for (const program of ['KEPT', 'DROPPED']) {
        const id = (await call('POST', '/api/v1/programs', { libraryId: library, name: program, controller: 'fanuc' })).id as string;
        const version = (await call('POST', `/api/v1/programs/${id}/versions`, { contentBase64: Buffer.from(`%\nO${program.length}00\nM30\n%\n`).toString('base64'), notes: '' })).id as string;
        const approval = (await call('POST', `/api/v1/versions/${version}/submit`)).approval.id as string;
        part.add(id).add(version).add(approval);
        if (program === 'DROPPED') await call('DELETE', `/api/v1/programs/${id}`);
      }
    }
    reviewedA = [...made.a].find((id) => id.startsWith('lib_') && id !== plant.libraryA) as string;
    await svc.request('PATCH', `/api/v1/machines/${plant.machineA}`, { cookie: admin.cookie, headers: admin.headers, body: { programDir: '//CNC_MEM/USER/PATH1/' } });
    await svc.request('PATCH', `/api/v1/machines/${plant.machineB}`, { cookie: admin.cookie, headers: admin.headers, body: { programDir: '//CNC_MEM/USER/PATH1/' } });

    const scopedUser = await userSession(svc, admin, 'lib.admin', 'admin', { libraries: [plant.libraryA, reviewedA], machineGroups: [plant.groupA] });
    scoped = scopedUser;
    const programmerA = await userSession(svc, admin, 'prog.a', 'programmer', { libraries: [reviewedA], machineGroups: [plant.groupA] });
    const programmerB = await userSession(svc, admin, 'prog.b', 'programmer', { libraries: [plant.libraryB], machineGroups: [plant.groupB] });
    const auditor = await userSession(svc, admin, 'cell.auditor', 'auditor', { libraries: '*', machineGroups: [plant.groupA] });
    cellAuditor = auditor;
    accounts.within.add(scopedUser.id).add(programmerA.id);
    accounts.beyond.add(programmerB.id).add(auditor.id);
    const adminId = (await get(admin, '/api/v1/auth/me')).body.id as string;
    accounts.beyond.add(adminId);
    const token = await svc.request('POST', '/api/v1/admin/service-tokens', { cookie: scoped.cookie, headers: scoped.headers, body: { name: 'mes-a', role: 'integration', requiresOperator: false } });
    expect(token.status).toBe(201);
    accounts.within.add(token.body.id);
    const wideToken = await svc.request('POST', '/api/v1/admin/service-tokens', { cookie: admin.cookie, headers: admin.headers, body: { name: 'mes-all', role: 'integration', requiresOperator: false } });
    accounts.beyond.add(wideToken.body.id);
    auditorId = auditor.id;
    // Webhooks: one made by the administrator of everything, one by the scoped administrator.
    const hookAll = await svc.request('POST', '/api/v1/admin/webhooks', { cookie: admin.cookie, headers: admin.headers, body: { url: 'https://mes.example/all', events: ['drift.opened'] } });
    const hookA = await svc.request('POST', '/api/v1/admin/webhooks', { cookie: scoped.cookie, headers: scoped.headers, body: { url: 'https://mes.example/a', events: ['drift.opened'] } });
    made.b.add(hookAll.body.id);
    made.a.add(hookA.body.id);
    scopedHook = hookA.body.id;
    // A failed sign-in under an unknown name: a record about no object of the service.
    await svc.request('POST', '/api/v1/auth/login', { body: { username: 'nobody', password: 'wrong-password-1' } });
  }, 60_000);
  afterAll(async () => {
    await svc.stop();
    await gw.stop();
  });

  /** What the administrator of library A and group A may see of a record, said from what the test made. */
  const visibleToScoped = (r: AuditItem): boolean => {
    switch (r.entityType) {
      case 'user':
      case 'serviceToken':
        return accounts.within.has(r.entityId as string);
      case 'deployment':
        return made.a.has(r.machine as string);
      case 'gateway':
      case null:
        return false;
      default:
        return made.a.has(r.entityId as string);
    }
  };

  it('PV-54 a scoped administrator\'s GET /audit leaves out the records about libraries, machines, accounts and webhooks beyond its scopes, and the service-wide ones', async () => {
    const everything = await all(admin);
    const mine = await all(scoped);
    // The plant has records of every kind on both sides, and the scoped view is exactly the visible part of the whole.
    for (const type of ['library', 'program', 'version', 'approval', 'machineGroup', 'machine', 'assignment', 'batch', 'deployment', 'user', 'serviceToken', 'webhook']) {
      expect(everything.filter((r) => r.entityType === type && visibleToScoped(r)).length, type).toBeGreaterThan(0);
      expect(everything.filter((r) => r.entityType === type && !visibleToScoped(r)).length, type).toBeGreaterThan(0);
    }
    expect(mine.map((r) => r.seq)).toEqual(everything.filter(visibleToScoped).map((r) => r.seq));
    expect(mine.some((r) => made.b.has(r.entityId as string) || made.b.has(r.machine as string))).toBe(false);
    expect(everything.some((r) => r.action === 'login.failed' && r.entityType === null)).toBe(true);
    expect(mine.some((r) => r.entityType === null || r.entityType === 'gateway')).toBe(false);
    // The deleted program's whole story stays in library A: created, changed, its draft uploaded, deleted.
    expect(mine.filter((r) => r.entityId === deletedProgram).map((r) => r.action)).toEqual(['program.delete', 'program.update', 'program.create']);
    expect(mine.filter((r) => made.a.has(r.entityId as string) && r.entityType === 'version').map((r) => r.action)).toEqual(expect.arrayContaining(['version.upload', 'version.publish']));
    // An object beyond the scopes asked for by name gives an empty list, as for one that does not exist.
    const libraryB = [...made.b][0] as string;
    expect((await get(scoped, `/api/v1/audit?entityType=library&entityId=${libraryB}`)).body).toEqual({ items: [], nextCursor: null });
  });

  it('PV-54 a caller of every library but one machine group sees every library\'s records and only that group\'s machines', async () => {
    const everything = await all(admin);
    const mine = await all(cellAuditor);
    const expected = everything.filter((r) => {
      if (['library', 'program', 'version', 'approval'].includes(r.entityType as string)) return true;
      if (r.entityType === 'deployment') return made.a.has(r.machine as string);
      if (['machine', 'machineGroup', 'assignment', 'batch'].includes(r.entityType as string)) return made.a.has(r.entityId as string);
      // Accounts as the grant rule sees them: an auditor holds only auditors within its scopes (itself here).
      if (r.entityType === 'user' || r.entityType === 'serviceToken') return r.entityId === auditorId;
      // The scoped administrator's webhook lies within every library and group A; the other covers every group.
      if (r.entityType === 'webhook') return r.entityId === scopedHook;
      return false;
    });
    expect(mine.map((r) => r.seq)).toEqual(expected.map((r) => r.seq));
    expect(mine.some((r) => r.entityType === 'library' && made.b.has(r.entityId as string))).toBe(true);
  });

  it('PV-54 paging a scoped caller\'s records gives full pages and every record in its scopes once, newest and oldest first', async () => {
    const mine = (await all(admin)).filter(visibleToScoped).map((r) => r.seq);
    expect(mine.length).toBeGreaterThan(10);
    for (const order of ['newest', 'oldest'] as const) {
      const paged: number[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res: Awaited<ReturnType<TestProgramService['request']>> = await get(scoped, `/api/v1/audit?limit=3&order=${order}${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.status).toBe(200);
        cursor = res.body.nextCursor;
        // Every page but the last is full: the scope is part of the query, not a filter over pages already read.
        if (cursor) expect(res.body.items).toHaveLength(3);
        paged.push(...res.body.items.map((r: AuditItem) => r.seq));
        pages++;
      } while (cursor);
      expect(paged).toEqual(order === 'newest' ? mine : [...mine].reverse());
      expect(pages).toBe(Math.ceil(mine.length / 3));
    }
    // With a filter too.
    const vault = (await all(admin, '&category=vault')).filter(visibleToScoped).map((r) => r.seq);
    const first = await get(scoped, '/api/v1/audit?category=vault&limit=2');
    const second = await get(scoped, `/api/v1/audit?category=vault&limit=2&cursor=${first.body.nextCursor}`);
    expect([...first.body.items, ...second.body.items].map((r: AuditItem) => r.seq)).toEqual(vault.slice(0, 4));
  });

  it('PV-54 PV-40 a scoped caller\'s CSV export holds the records in its scopes, oldest first', async () => {
    const mine = (await all(admin)).filter(visibleToScoped).map((r) => r.seq);
    const res = await get(scoped, '/api/v1/audit/export?format=csv');
    expect(res.status).toBe(200);
    const rows = parseCsv(res.text);
    expect(rows[0]?.[0]).toBe('seq');
    expect(rows.slice(1).map((r) => Number(r[0]))).toEqual([...mine].reverse());
    const filtered = parseCsv((await get(scoped, '/api/v1/audit/export?format=csv&entityType=deployment')).text).slice(1);
    expect(filtered.length).toBeGreaterThan(0);
    expect(filtered.every((r) => made.a.has(r[9] as string))).toBe(true);
  });

  it('PV-15 PV-54 verify walks the whole chain for a scoped caller too: the same answer, counting every record', async () => {
    const everything = await all(admin);
    const forAdmin = await get(admin, '/api/v1/audit/verify');
    const forScoped = await get(scoped, '/api/v1/audit/verify');
    expect(forScoped.status).toBe(200);
    expect(forScoped.body).toEqual(forAdmin.body);
    expect(forScoped.body).toMatchObject({ intact: true, firstBrokenSeq: null });
    expect(forScoped.body.checked).toBeGreaterThanOrEqual(everything.length);
    expect(forScoped.body.checked).toBeGreaterThan(everything.filter(visibleToScoped).length);
  });

  // Last: it breaks the chain.
  it('PV-54 a record whose details are not JSON (written behind the service) is hidden from a scoped caller and shown as unreadable to others, never an error', async () => {
    const db = await openProgramsDatabase(svc.dataDir);
    let seq: number;
    try {
      seq = await db.write(async (tx) => {
        const head = await tx.get<{ seq: number; hash: string }>('SELECT seq, hash FROM audit_head WHERE id = 1');
        const next = Number(head?.seq) + 1;
        // The deletion record of a program no longer in the vault, as the rule for deleted programs reads it.
        await tx.run(
          "INSERT INTO audit_log (seq, ts, principal_name, auth_method, category, action, entity_type, entity_id, details, prev_hash, hash) VALUES (?, ?, 'intruder', 'session', 'program', 'program.delete', 'program', 'gone-program', '{not json', ?, ?)",
          [next, Date.now(), head?.hash ?? '', 'f'.repeat(64)],
        );
        return next;
      });
    } finally {
      await db.close();
    }
    const mine = await all(scoped);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.some((r) => r.seq === seq)).toBe(false);
    // An unscoped reader gets the listing and the export, the record's text shown as unreadable details.
    const everything = await all(admin);
    expect(everything.find((r) => r.seq === seq)?.details).toEqual({ unreadable: '{not json' });
    const csv = await get(admin, '/api/v1/audit/export?format=csv');
    expect(csv.status).toBe(200);
    expect(csv.text).toContain('gone-program');
  });
});
