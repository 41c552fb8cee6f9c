/**
 * Machine assignments over real HTTP, against a real gateway reached
 * in-process, with the vault and the fleet met through their services.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessGatewayLink } from '../../../core/gateway-link/in-process.js';
import { assignmentsPlugin } from '../../../plugins/assignments/index.js';
import { gatewaysPlugin } from '../../../plugins/gateways/index.js';
import { vaultPlugin } from '../../../plugins/vault/index.js';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { openProgramsDatabase, startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, userSession, type Session } from '../../fixtures/programs-accounts.js';

const PROGRAM = '%\r\nO1001 (BRACKET)\r\nN10 G90 G54\r\nN20 M30\r\n%\r\n';
const DIR = '//CNC_MEM/USER/PATH1/';

describe('machine assignments', () => {
  let gw: TestGateway;
  let svc: TestProgramService;
  let admin: Session;
  let programId: string;
  let published: string;
  let machines: { id: string; machineId: string }[];
  let group: { id: string; machineIds: string[] };

  const post = (path: string, body?: unknown, s: Session = admin) => svc.request('POST', path, { cookie: s.cookie, headers: s.headers, ...(body !== undefined ? { body } : {}) });
  const get = (path: string, s: Session = admin) => svc.request('GET', path, { cookie: s.cookie });

  beforeAll(async () => {
    gw = await startTestGateway({ machines: [simMachine('M01'), simMachine('M02'), simMachine('M03'), simMachine('M04', { system: 'MITSUBISHI', model: 'M80' })], groups: [{ groupID: 'cell', name: 'Cell', machineIDs: ['M01', 'M02'] }] });
    svc = await startTestProgramService({
      plugins: [TEST_ACCOUNTS, vaultPlugin, gatewaysPlugin, assignmentsPlugin], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD },
      localGateway: new InProcessGatewayLink(gw.gateway.context.interfaces), now: () => Date.UTC(2026, 10, 24, 9),
    });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    const lib = await post('/api/v1/libraries', { name: 'Brackets', approvalPolicy: { mode: 'autoRelease' } });
    programId = (await post('/api/v1/programs', { libraryId: lib.body.id, name: 'O1001 BRACKET', controller: 'fanuc' })).body.id;
    const v = await post(`/api/v1/programs/${programId}/versions`, { contentBase64: Buffer.from(PROGRAM).toString('base64'), notes: '' });
    await post(`/api/v1/versions/${v.body.id}/submit`);
    published = v.body.id;
    machines = (await get('/api/v1/machines')).body.items;
    group = (await get('/api/v1/machine-groups')).body.items.find((g: { gatewayGroupId: string }) => g.gatewayGroupId === 'cell');
  });
  afterAll(async () => {
    await svc.stop();
    await gw.stop();
  });

  const machine = (id: string) => machines.find((m) => m.machineId === id) as { id: string };

  it('PV-34 POST and GET /machine-assignments: a program to a machine or a group, with a directory and a transform', async () => {
    const toMachine = await post('/api/v1/machine-assignments', {
      programId, machineId: machine('M03').id, dir: '//CNC_MEM/USER/PATH1/', transform: { fileName: 'O{programNumber}', programNumber: 2001, header: ['(V{version} {sha8} {date})'] },
    });
    expect(toMachine.status).toBe(201);
    expect(toMachine.body).toMatchObject({ programId, machineId: machine('M03').id, groupId: null, transform: { fileName: 'O{programNumber}', programNumber: 2001, lineEnding: 'keep' } });
    const toGroup = await post('/api/v1/machine-assignments', { programId, groupId: group.id, dir: DIR, transform: { header: ['(FOR {machine})'] } });
    expect(toGroup.status).toBe(201);
    const again = await post('/api/v1/machine-assignments', { programId, groupId: group.id, dir: DIR });
    expect(again.status).toBe(409);
    expect(again.body.assignmentId).toBe(toGroup.body.id);
    const both = await post('/api/v1/machine-assignments', { programId, machineId: machine('M01').id, groupId: group.id });
    expect(both.status).toBe(400);
    const unknownVar = await post('/api/v1/machine-assignments', { programId, machineId: machine('M01').id, transform: { header: ['({operator})'] } });
    expect(unknownVar.status).toBe(400);
    expect(unknownVar.body.errors[0].field).toBe('body.transform.header[0]');
    const list = await get(`/api/v1/machine-assignments?programId=${programId}`);
    expect(list.body.items.map((a: { id: string }) => a.id).sort()).toEqual([toMachine.body.id, toGroup.body.id].sort());
    expect((await get(`/api/v1/machine-assignments?machineId=${machine('M03').id}`)).body.items.map((a: { id: string }) => a.id)).toEqual([toMachine.body.id]);
  });

  it('PV-34 preview-transform returns the transformed content and its diff against the version, without touching the machine', async () => {
    const a = (await get(`/api/v1/machine-assignments?machineId=${machine('M03').id}`)).body.items[0];
    const before = await gw.request('GET', '/api/cnc/readProgramList?machineID=M03&dirAtCNC=//CNC_MEM/USER/PATH1/');
    const preview = await post(`/api/v1/machine-assignments/${a.id}/preview-transform`);
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({ fileName: 'O2001', dir: '//CNC_MEM/USER/PATH1/', source: { versionId: published, number: 1, state: 'published' } });
    expect(preview.body.result.text).toBe('%\r\nO2001 (BRACKET)\r\n(V1 ' + preview.body.source.sha256.slice(0, 8) + ' 2026-11-24)\r\nN10 G90 G54\r\nN20 M30\r\n%\r\n');
    expect(Buffer.from(preview.body.result.contentBase64, 'base64').toString()).toBe(preview.body.result.text);
    expect(preview.body.diff.identical).toBe(false);
    expect(preview.body.diff.unified).toContain('+O2001 (BRACKET)');
    // Every line is compared as written: the header comment the transform adds is in the diff too.
    expect(preview.body.diff.unified).toContain(`+(V1 ${preview.body.source.sha256.slice(0, 8)} 2026-11-24)`);
    const after = await gw.request('GET', '/api/cnc/readProgramList?machineID=M03&dirAtCNC=//CNC_MEM/USER/PATH1/');
    expect((after.body.data as { programs: unknown }).programs).toEqual((before.body.data as { programs: unknown }).programs);
  });

  it('PV-34 a group assignment is previewed for one of its machines; drafts only when named', async () => {
    const a = (await get(`/api/v1/machine-assignments?groupId=${group.id}`)).body.items[0];
    const missing = await post(`/api/v1/machine-assignments/${a.id}/preview-transform`, {});
    expect(missing.status).toBe(422);
    expect(missing.body.errors[0]).toMatchObject({ field: 'body.machineId' });
    const outsider = await post(`/api/v1/machine-assignments/${a.id}/preview-transform`, { machineId: machine('M03').id });
    expect(outsider.status).toBe(422);
    const ok = await post(`/api/v1/machine-assignments/${a.id}/preview-transform`, { machineId: machine('M02').id });
    expect(ok.body.result.text).toContain('(FOR M02)');
    const draft = await post(`/api/v1/programs/${programId}/versions`, { contentBase64: Buffer.from('%\nO1001\nM30\n%\n').toString('base64'), notes: 'draft' });
    const ofDraft = await post(`/api/v1/machine-assignments/${a.id}/preview-transform`, { machineId: machine('M01').id, versionId: draft.body.id });
    expect(ofDraft.body.source).toMatchObject({ versionId: draft.body.id, state: 'draft' });
  });

  it('PV-54 an assignment whose machine is outside the caller\'s scope is 404; assigning needs assignments.manage (403)', async () => {
    const operator = await userSession(svc, admin, 'op.cell', 'operator', { libraries: '*', machineGroups: [group.id] });
    const hidden = (await get(`/api/v1/machine-assignments?machineId=${machine('M03').id}`)).body.items[0];
    expect((await post(`/api/v1/machine-assignments/${hidden.id}/preview-transform`, {}, operator)).status).toBe(404);
    expect((await get('/api/v1/machine-assignments', operator)).body.items.map((a: { id: string }) => a.id)).not.toContain(hidden.id);
    expect((await post('/api/v1/machine-assignments', { programId, machineId: machine('M01').id }, operator)).status).toBe(403);
  });

  it('PV-34 a file name or directory that would leave its directory is refused when the assignment is made (422 naming the field)', async () => {
    const assign = (dir: string, fileName: string) => post('/api/v1/machine-assignments', { programId, machineId: machine('M01').id, dir, transform: { fileName } });
    const traversal = await assign('//CNC_MEM/USER/PATH1/', '../../etc/passwd');
    expect(traversal.status).toBe(422);
    expect(traversal.body.errors).toEqual([expect.objectContaining({ field: 'body.transform.fileName', message: expect.stringContaining('../../etc/passwd'), accepted: expect.stringContaining('plain file name') })]);
    for (const fileName of ['/etc/passwd', '{program}/O1', 'O1\\..\\x', '..{sha8}', ' O1']) {
      const res = await assign(DIR, fileName);
      expect(res.status, fileName).toBe(422);
      expect(res.body.errors[0].field).toBe('body.transform.fileName');
    }
    for (const dir of ['../../etc', '//CNC_MEM/USER/../../', 'C:\\prog\\..']) {
      const res = await assign(dir, 'O1234');
      expect(res.status, dir).toBe(422);
      expect(res.body.errors).toEqual([expect.objectContaining({ field: 'body.dir', message: expect.stringContaining("'..'") })]);
    }
    // Control characters and lengths are the schema's: the request itself is invalid (400), naming the field.
    const control = await assign('//CNC_MEM/\u0000/', 'O1');
    expect(control.status).toBe(400);
    expect(control.body.errors[0].field).toBe('body.dir');
    const long = await assign(DIR, `O${'1'.repeat(200)}`);
    expect(long.status).toBe(400);
    expect(long.body.errors[0].field).toBe('body.transform.fileName');
    // Nothing was made; a name with dots inside is a plain name, on a control whose family has no rule of its own.
    expect((await get(`/api/v1/machine-assignments?machineId=${machine('M01').id}`)).body.items).toEqual([]);
    expect((await post('/api/v1/machine-assignments', { programId, machineId: machine('M04').id, dir: DIR, transform: { fileName: 'O{programNumber}.v{version}.nc' } })).status).toBe(201);
  });

  const patch = (path: string, body: unknown, s: Session = admin) => svc.request('PATCH', path, { cookie: s.cookie, headers: s.headers, body });
  const del = (path: string, s: Session = admin) => svc.request('DELETE', path, { cookie: s.cookie, headers: s.headers });
  const audited = async (id: string) => {
    const db = await openProgramsDatabase(svc.dataDir);
    try {
      return (await db.all<{ action: string; details: string }>('SELECT action, details FROM audit_log WHERE entity_id = ? ORDER BY seq', [id])).map((r) => ({ action: r.action, details: JSON.parse(r.details) as Record<string, unknown> }));
    } finally {
      await db.close();
    }
  };

  it('PV-34 a directory is required when a target machine has none (422 body.dir naming the machines); one given its program directory needs none', async () => {
    const other = await post('/api/v1/programs', { libraryId: (await get('/api/v1/libraries')).body.items[0].id, name: 'O1002 PLATE', controller: 'fanuc' });
    const plate = await post(`/api/v1/programs/${other.body.id}/versions`, { contentBase64: Buffer.from(PROGRAM).toString('base64'), notes: '' });
    await post(`/api/v1/versions/${plate.body.id}/submit`);
    const noDir = await post('/api/v1/machine-assignments', { programId: other.body.id, groupId: group.id });
    expect(noDir.status).toBe(422);
    expect(noDir.body.errors).toEqual([expect.objectContaining({ field: 'body.dir', message: expect.stringMatching(/machines M01, M02 have no program directory/) })]);
    expect((await patch(`/api/v1/machines/${machine('M02').id}`, { programDir: '//CNC_MEM/USER/PATH2/' })).status).toBe(200);
    const m02 = await post('/api/v1/machine-assignments', { programId: other.body.id, machineId: machine('M02').id });
    expect(m02.status).toBe(201);
    expect((await post(`/api/v1/machine-assignments/${m02.body.id}/preview-transform`, {})).body).toMatchObject({ dir: '//CNC_MEM/USER/PATH2/', warnings: [] });
    // The machine loses its directory later: the preview says so before anyone deploys.
    await patch(`/api/v1/machines/${machine('M02').id}`, { programDir: '' });
    const preview = await post(`/api/v1/machine-assignments/${m02.body.id}/preview-transform`, {});
    expect(preview.body.warnings).toEqual([expect.stringMatching(/^machine M02 has no program directory and the assignment names none: .*A deployment to it is refused\.$/)]);
  });

  it('PV-34 PATCH changes an assignment\'s directory and transform, checked like a new one and audited with before and after', async () => {
    const a = (await get(`/api/v1/machine-assignments?machineId=${machine('M03').id}`)).body.items[0];
    const traversal = await patch(`/api/v1/machine-assignments/${a.id}`, { transform: { fileName: '../../etc/passwd' } });
    expect(traversal.status).toBe(422);
    expect(traversal.body.errors[0].field).toBe('body.transform.fileName');
    expect((await patch(`/api/v1/machine-assignments/${a.id}`, { dir: '//CNC_MEM/../../' })).body.errors[0].field).toBe('body.dir');
    expect((await patch(`/api/v1/machine-assignments/${a.id}`, { dir: '' })).body.errors[0]).toMatchObject({ field: 'body.dir', message: expect.stringContaining('machine M03 has no program directory') });
    const moved = await patch(`/api/v1/machine-assignments/${a.id}`, { programId: a.programId });
    expect(moved.status).toBe(400);
    const changed = await patch(`/api/v1/machine-assignments/${a.id}`, { dir: '//CNC_MEM/USER/PATH3/', transform: { fileName: 'O{programNumber}', programNumber: 2002 } });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ id: a.id, programId: a.programId, machineId: a.machineId, dir: '//CNC_MEM/USER/PATH3/', transform: { fileName: 'O{programNumber}', programNumber: 2002 } });
    expect(changed.body.createdAt).toBe(a.createdAt);
    expect((await post(`/api/v1/machine-assignments/${a.id}/preview-transform`, {})).body).toMatchObject({ dir: '//CNC_MEM/USER/PATH3/', fileName: 'O2002' });
    const records = await audited(a.id);
    expect(records.map((r) => r.action)).toEqual(['assignment.create', 'assignment.update']);
    expect(records[1]?.details).toMatchObject({ before: { dir: a.dir }, after: { dir: '//CNC_MEM/USER/PATH3/', transform: { programNumber: 2002 } } });
  });

  it('PV-34 PV-54 DELETE removes an assignment (204, audited); outside the caller\'s scope it is 404 and without assignments.manage 403', async () => {
    const a = (await get(`/api/v1/machine-assignments?machineId=${machine('M03').id}`)).body.items[0];
    const scoped = await userSession(svc, admin, 'prog.cell', 'programmer', { libraries: '*', machineGroups: [group.id] });
    expect((await del(`/api/v1/machine-assignments/${a.id}`, scoped)).status).toBe(404);
    expect((await patch(`/api/v1/machine-assignments/${a.id}`, { dir: '//X/' }, scoped)).status).toBe(404);
    const auditor = await userSession(svc, admin, 'aud.cell', 'auditor');
    expect((await del(`/api/v1/machine-assignments/${a.id}`, auditor)).status).toBe(403);
    expect((await del(`/api/v1/machine-assignments/${a.id}`)).status).toBe(204);
    expect((await get(`/api/v1/machine-assignments?machineId=${machine('M03').id}`)).body.items).toEqual([]);
    expect((await post(`/api/v1/machine-assignments/${a.id}/preview-transform`, {})).status).toBe(404);
    expect((await del(`/api/v1/machine-assignments/${a.id}`)).status).toBe(404);
    expect((await audited(a.id)).map((r) => r.action)).toEqual(['assignment.create', 'assignment.update', 'assignment.delete']);
    // The program can be assigned to the machine again.
    expect((await post('/api/v1/machine-assignments', { programId: a.programId, machineId: machine('M03').id, dir: DIR })).status).toBe(201);
  });
});
