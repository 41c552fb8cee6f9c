/**
 * File names a machine's control takes: the control families' rules
 * (plugins/assignments/file-name-rules.ts), and their check wherever a file
 * name is given for a machine — an assignment made or changed, a preview,
 * a deployment — over real HTTP against a real gateway whose machines name
 * their control (`system`). A program's default file name comes from its
 * program number, not from its display name.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessGatewayLink } from '../../../core/gateway-link/in-process.js';
import { defaultFileName } from '../../../core/roles/programs/file-name-template.js';
import { assignmentsPlugin } from '../../../plugins/assignments/index.js';
import { fileNameRefusal } from '../../../plugins/assignments/file-name-rules.js';
import { deploymentsPlugin } from '../../../plugins/deployments/index.js';
import { gatewaysPlugin } from '../../../plugins/gateways/index.js';
import { vaultPlugin } from '../../../plugins/vault/index.js';
import { webhooksPlugin } from '../../../plugins/webhooks/index.js';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, type Session } from '../../fixtures/programs-accounts.js';

const DIR = '//CNC_MEM/USER/PATH1/';
const CONTENT = Buffer.from('%\nO1234 (FLANGE OP10)\nG90 G54\nM30\n%\n').toString('base64');

describe('the control families\' file-name rules', () => {
  const takes = (system: string, model: string, name: string) => fileNameRefusal({ system, model }, name) === undefined;

  it('FANUC takes O and a 4-digit program number; 8 digits on a 0i-F or 30i-B series control', () => {
    for (const name of ['O0001', 'O1234', 'O9999']) expect(takes('FANUC', '0i-MD', name), name).toBe(true);
    for (const name of ['O1234 Flange OP10', 'O12345', 'O123', 'O0000', 'o1234', 'O1234.NC', 'FLANGE']) expect(takes('FANUC', '0i-MD', name), name).toBe(false);
    for (const model of ['0i-MF', '0i-TF Plus', '0i-F', '31i-B5', '30i-B']) expect(takes('FANUC', model, 'O12345678'), model).toBe(true);
    expect(takes('FANUC', '0i-MF Plus', 'O123456789')).toBe(false);
    expect(fileNameRefusal({ system: 'FANUC', model: '0i-MD' }, 'FLANGE')).toMatch(/^a FANUC control takes only O and its 4-digit program number \(O0001 to O9999\)/);
  });

  it('Haas takes O and 4 or 5 digits', () => {
    expect(['O1234', 'O12345'].map((n) => takes('HAAS', 'VF-2', n))).toEqual([true, true]);
    expect(['O123456', 'P12345', 'O12345.nc'].map((n) => takes('HAAS', 'VF-2', n))).toEqual([false, false, false]);
  });

  it('Siemens takes NAME.MPF and _N_NAME_MPF (and subprograms) of letters, digits and _ up to 24, never a device name', () => {
    for (const name of ['FLANGE_OP10.MPF', '_N_FLANGE_OP10_MPF', 'SUB1.SPF', '_N_SUB1_SPF', 'part7.mpf']) expect(takes('SIEMENS', '840D sl', name), name).toBe(true);
    for (const name of ['FLANGE OP10.MPF', 'FLANGE', 'FLANGE.NC', `${'A'.repeat(25)}.MPF`, 'CON.MPF', '_N_LPT1_MPF', 'FLANGE-1.MPF']) expect(takes('SIEMENS', '840D sl', name), name).toBe(false);
  });

  it('HEIDENHAIN takes .H and .I names of letters, digits, _, - and .', () => {
    for (const name of ['PROG20.H', 'FLANGE-OP10.I', 'a_b.c.H']) expect(takes('HEIDENHAIN', 'TNC 640', name), name).toBe(true);
    for (const name of ['PROG20', 'PROG20.h', 'FLANGE OP10.H', `${'A'.repeat(25)}.H`, '-X.H']) expect(takes('HEIDENHAIN', 'TNC 640', name), name).toBe(false);
  });

  it('Mazak takes work numbers of letters, digits, _ and - up to 32; Okuma .MIN and .SDF names of up to 16 letters and digits', () => {
    expect(['1234', 'FLANGE-OP10', 'A_1'].map((n) => takes('MAZAK', 'SmoothX', n))).toEqual([true, true, true]);
    expect(['FLANGE OP10', 'FLANGE.EIA', 'A'.repeat(33)].map((n) => takes('MAZAK', 'SmoothX', n))).toEqual([false, false, false]);
    expect(['FLANGE1.MIN', 'SUB2.SDF', 'A234567890123456.MIN'].map((n) => takes('OKUMA', 'OSP-P300LA', n))).toEqual([true, true, true]);
    expect(['1FLANGE.MIN', 'FLANGE-1.MIN', 'FLANGE.MPF', 'A2345678901234567.MIN'].map((n) => takes('OKUMA', 'OSP-P300LA', n))).toEqual([false, false, false, false]);
  });

  it('a system the table does not know keeps the plain-file-name rule alone', () => {
    expect(takes('MITSUBISHI', 'M80', 'Flange OP10.nc')).toBe(true);
    expect(takes('', '', 'anything')).toBe(true);
  });

  it('a program\'s default file name is its program number, not its display name', () => {
    expect(defaultFileName('O1234 Flange OP10')).toBe('O1234');
    expect(defaultFileName('o12-shaft')).toBe('O0012');
    expect(defaultFileName('O2000')).toBe('O2000');
    expect(defaultFileName('Flange OP10')).toBe('{program}');
    expect(defaultFileName('OP10 Flange')).toBe('{program}');
  });
});

describe('file names checked at assignment, preview and deployment', () => {
  let gw: TestGateway;
  let svc: TestProgramService;
  let admin: Session;
  let machines: Record<string, string>;
  let libraryId: string;

  const post = (path: string, body?: unknown) => svc.request('POST', path, { cookie: admin.cookie, headers: admin.headers, ...(body !== undefined ? { body } : {}) });
  const patch = (path: string, body: unknown) => svc.request('PATCH', path, { cookie: admin.cookie, headers: admin.headers, body });
  const get = (path: string) => svc.request('GET', path, { cookie: admin.cookie });
  const program = async (name: string, extra: Record<string, unknown> = {}) => {
    const made = (await post('/api/v1/programs', { libraryId, name, controller: 'fanuc', ...extra })).body as { id: string; fileName: string };
    const v = await post(`/api/v1/programs/${made.id}/versions`, { contentBase64: CONTENT, notes: '' });
    await post(`/api/v1/versions/${v.body.id}/submit`);
    return { ...made, versionId: v.body.id as string };
  };

  beforeAll(async () => {
    gw = await startTestGateway({
      machines: [
        simMachine('F01', { model: '0i-MD' }), simMachine('F02', { model: '31i-B5' }),
        simMachine('S01', { system: 'SIEMENS', model: '840D sl' }), simMachine('H01', { system: 'HEIDENHAIN', model: 'TNC 640' }),
        simMachine('K01', { system: 'OKUMA', model: 'OSP-P300LA' }), simMachine('X01', { system: 'MITSUBISHI', model: 'M80' }),
      ],
    });
    svc = await startTestProgramService({
      plugins: [TEST_ACCOUNTS, vaultPlugin, gatewaysPlugin, assignmentsPlugin, deploymentsPlugin, webhooksPlugin], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD },
      localGateway: new InProcessGatewayLink(gw.gateway.context.interfaces), dataDir: mkdtempSync(join(tmpdir(), 'programs-file-names-')),
    });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    libraryId = (await post('/api/v1/libraries', { name: 'Flanges', approvalPolicy: { mode: 'autoRelease' } })).body.id;
    machines = Object.fromEntries((await get('/api/v1/machines')).body.items.map((m: { id: string; machineId: string }) => [m.machineId, m.id]));
  });
  afterAll(async () => {
    await svc?.stop();
    await gw?.stop();
  });

  it('PV-34 a program named "O1234 Flange OP10" lands on a FANUC as O1234: its file name comes from its number, shown and editable on the program', async () => {
    const flange = await program('O1234 Flange OP10');
    expect(flange.fileName).toBe('O1234');
    const made = await post('/api/v1/machine-assignments', { programId: flange.id, machineId: machines.F01, dir: DIR });
    expect(made.status).toBe(201);
    expect(made.body.transform.fileName).toBe('O1234');
    expect((await post(`/api/v1/machine-assignments/${made.body.id}/preview-transform`, {})).body.fileName).toBe('O1234');
    // Renumbered by the assignment: the file takes the number it gets.
    const renumbered = await post('/api/v1/machine-assignments', { programId: flange.id, machineId: machines.F02, dir: DIR, transform: { programNumber: 12345678 } });
    expect(renumbered.body.transform.fileName).toBe('O{programNumber}');
    expect((await post(`/api/v1/machine-assignments/${renumbered.body.id}/preview-transform`, {})).body.fileName).toBe('O12345678');
    // The program's file name is set and changed on the program.
    const named = await program('Flange OP20', { fileName: 'O1235' });
    expect(named.fileName).toBe('O1235');
    expect((await patch(`/api/v1/programs/${named.id}`, { fileName: 'O1236' })).body.fileName).toBe('O1236');
  });

  it('PV-34 a name the machine\'s control will not take is refused when the assignment is made or changed: 422 naming the field and the rule', async () => {
    const flange = await program('Flange OP30');
    expect(flange.fileName).toBe('{program}');
    const onFanuc = await post('/api/v1/machine-assignments', { programId: flange.id, machineId: machines.F01, dir: DIR });
    expect(onFanuc.status).toBe(422);
    expect(onFanuc.body.errors).toEqual([{
      field: 'body.transform.fileName',
      message: 'the file name "Flange OP30" will not do on machine F01 (FANUC 0i-MD): a FANUC control takes only O and its 4-digit program number (O0001 to O9999); 8 digits only on a 0i-F or 30i-B series control',
      accepted: 'O and its 4-digit program number (O0001 to O9999); 8 digits only on a 0i-F or 30i-B series control',
    }]);
    const eightOn0iD = await post('/api/v1/machine-assignments', { programId: flange.id, machineId: machines.F01, dir: DIR, transform: { fileName: 'O12345678' } });
    expect(eightOn0iD.status).toBe(422);
    for (const [machine, good, bad] of [['S01', 'FLANGE_OP30.MPF', 'FLANGE OP30.MPF'], ['H01', 'FLANGE_OP30.H', 'FLANGE_OP30.NC'], ['K01', 'FLANGE30.MIN', 'FLANGE_30.MIN']] as const) {
      const refused = await post('/api/v1/machine-assignments', { programId: flange.id, machineId: machines[machine], dir: DIR, transform: { fileName: bad } });
      expect(refused.status, bad).toBe(422);
      expect(refused.body.errors[0].field).toBe('body.transform.fileName');
      const made = await post('/api/v1/machine-assignments', { programId: flange.id, machineId: machines[machine], dir: DIR, transform: { fileName: good } });
      expect(made.status, good).toBe(201);
      const changed = await patch(`/api/v1/machine-assignments/${made.body.id}`, { transform: { fileName: bad } });
      expect(changed.status, bad).toBe(422);
      expect(changed.body.errors[0]).toMatchObject({ field: 'body.transform.fileName', message: expect.stringContaining(`machine ${machine}`) });
    }
    // A control the table does not know keeps the plain-file-name rule.
    expect((await post('/api/v1/machine-assignments', { programId: flange.id, machineId: machines.X01, dir: DIR })).status).toBe(201);
  });

  it('PV-34 PV-35 a group member whose control will not take the name is refused at the preview and at the deployment (422 with the rule), before anything is sent', async () => {
    const flange = await program('O1240 Flange OP40');
    const group = await post('/api/v1/machine-groups', { name: 'Flange cell', machineIds: [machines.F01, machines.F02] });
    const assigned = await post('/api/v1/machine-assignments', { programId: flange.id, groupId: group.body.id, dir: DIR });
    expect(assigned.status).toBe(201);
    // Refused at once for a group that already holds a Siemens machine.
    const mixed = await post('/api/v1/machine-groups', { name: 'Mixed cell', machineIds: [machines.F01, machines.S01] });
    const refused = await post('/api/v1/machine-assignments', { programId: flange.id, groupId: mixed.body.id, dir: DIR });
    expect(refused.body.errors[0]).toMatchObject({ field: 'body.transform.fileName', message: expect.stringContaining('machine S01 (SIEMENS 840D sl): a Siemens SINUMERIK control takes only') });
    // A Siemens machine joins the group after the assignment was made.
    expect((await patch(`/api/v1/machine-groups/${group.body.id}`, { machineIds: [machines.F01, machines.F02, machines.S01] })).status).toBe(200);
    const preview = await post(`/api/v1/machine-assignments/${assigned.body.id}/preview-transform`, { machineId: machines.S01 });
    expect(preview.status).toBe(422);
    expect(preview.body.errors[0]).toMatchObject({ field: 'transform.fileName', message: expect.stringContaining('"O1240" will not do on machine S01'), accepted: expect.stringMatching(/^a name of 1 to 24 letters, digits and _ as a main program NAME\.MPF/) });
    expect(preview.body.detail).toMatch(/^The file name "O1240" will not do on machine S01/);
    expect((await post(`/api/v1/machine-assignments/${assigned.body.id}/preview-transform`, { machineId: machines.F02 })).status).toBe(200);
    const files = async () => ((await gw.request('GET', `/api/cnc/readProgramList?machineID=F01&dirAtCNC=${encodeURIComponent(DIR)}`)).body.data as { programs: unknown[] }).programs;
    const before = await files();
    const deploy = await post('/api/v1/deployments', { versionId: flange.versionId, assignmentIds: [assigned.body.id], isTrial: false, trialHours: null });
    expect(deploy.status).toBe(422);
    expect(deploy.body.errors[0]).toMatchObject({ field: 'body.assignmentIds[0]', message: expect.stringMatching(/"O1240" will not do on machine S01 \(SIEMENS 840D sl\): a Siemens SINUMERIK control takes only a name of 1 to 24 letters/) });
    // Nothing went to any machine of the batch.
    expect((await get('/api/v1/deployments?limit=10')).body.items).toEqual([]);
    expect(await files()).toEqual(before);
  });
});
