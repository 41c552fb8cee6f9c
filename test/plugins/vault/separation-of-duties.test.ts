/**
 * Separation of duties counts the operator a caller declares with
 * X-On-Behalf-Of: the person behind an upload, a submission or a decision is
 * the caller and the operator it names. Over real HTTP, checked against the
 * OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { vaultPlugin } from '../../../plugins/vault/index.js';
import { startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, userSession, type Session } from '../../fixtures/programs-accounts.js';

const PROGRAM = Buffer.from('%\nO2001 (SOD)\nN10 G90 G54 G00 X0 Y0\nN20 M30\n%\n', 'latin1').toString('base64');

/** Who calls: a session, or a service token; either may declare an operator. */
type Caller = Session | { token: string };

describe('separation of duties with X-On-Behalf-Of', () => {
  let svc: TestProgramService;
  let admin: Session;
  let cam: Session;
  let cam2: Session;
  let carla: Session;
  let dan: Session;
  let qms: { token: string };
  let camSystem: { token: string };

  const call = (method: string, by: Caller, path: string, body?: unknown, operator?: string) => {
    const onBehalf: Record<string, string> = operator ? { 'x-on-behalf-of': operator } : {};
    const auth = 'token' in by ? { token: by.token, headers: onBehalf } : { cookie: by.cookie, headers: { ...by.headers, ...onBehalf } };
    return svc.request(method, path, { ...auth, ...(body !== undefined ? { body } : {}) });
  };
  const token = async (name: string, role: string) => ({ token: (await call('POST', admin, '/api/v1/admin/service-tokens', { name, role })).body.token as string });
  /** A library needing `required` approvals (named approvers when given), a program in it, and a version uploaded by `uploader`. */
  const version = async (required: number, uploader: Caller, uploaderOperator?: string, approvers: string[] = []) => {
    const lib = await call('POST', admin, '/api/v1/libraries', { name: `SoD ${Math.random().toString(36).slice(2, 10)}`, approvalPolicy: { mode: 'approvals', required }, approvers });
    const prg = await call('POST', admin, '/api/v1/programs', { libraryId: lib.body.id, name: 'O2001', controller: 'fanuc' });
    const v = await call('POST', uploader, `/api/v1/programs/${prg.body.id}/versions`, { contentBase64: PROGRAM, notes: '' }, uploaderOperator);
    expect(v.status).toBe(201);
    return v.body.id as string;
  };
  const submit = async (versionId: string, by: Caller, operator?: string) => {
    const res = await call('POST', by, `/api/v1/versions/${versionId}/submit`, undefined, operator);
    expect(res.status).toBe(200);
    return res.body.approval as { id: string; excluded: string[] };
  };
  const decide = (approvalId: string, by: Caller, operator?: string) => call('POST', by, `/api/v1/approvals/${approvalId}/decide`, { decision: 'approve', comment: '' }, operator);

  beforeAll(async () => {
    svc = await startTestProgramService({ plugins: [TEST_ACCOUNTS, vaultPlugin], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD } });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    cam = await userSession(svc, admin, 'cam.anna', 'programmer');
    cam2 = await userSession(svc, admin, 'cam.ben', 'programmer');
    carla = await userSession(svc, admin, 'pe.carla', 'approver');
    dan = await userSession(svc, admin, 'pe.dan', 'approver');
    qms = await token('QMS approvals', 'approver');
    camSystem = await token('CAM system', 'integration');
  });
  afterAll(() => svc.stop());

  it('PV-22 PV-52 an approver declaring the version\'s uploader as operator is refused like the uploader, as a token and as a user', async () => {
    const v = await version(1, cam);
    const approval = await submit(v, cam2);
    for (const [by, operator] of [[qms, 'cam.anna'], [qms, 'CAM.Anna'], [carla, 'cam.anna']] as const) {
      const res = await decide(approval.id, by, operator);
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ type: expect.stringMatching(/\/separation-of-duties$/), rule: 'uploaded this version' });
    }
    const after = await call('GET', admin, `/api/v1/approvals/${approval.id}`);
    expect(after.body).toMatchObject({ state: 'pending', decisions: [] });
  });

  it('PV-22 PV-52 an approver declaring the version\'s submitter as operator is refused like the submitter, as a token and as a user', async () => {
    const v = await version(1, cam);
    const approval = await submit(v, cam2);
    for (const [by, operator] of [[qms, 'cam.ben'], [dan, 'cam.ben']] as const) {
      const res = await decide(approval.id, by, operator);
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ type: expect.stringMatching(/\/separation-of-duties$/), rule: 'submitted this version' });
    }
    const approved = await decide(approval.id, qms, 'pe.dan');
    expect(approved.status).toBe(200);
    expect(approved.body.version.state).toBe('published');
  });

  it('PV-22 a person a system uploaded or submitted for may not approve it themself, and counts as excluded', async () => {
    const v = await version(1, camSystem, 'pe.carla');
    const approval = await submit(v, camSystem, 'pe.dan');
    expect(approval.excluded).toEqual(expect.arrayContaining(['CAM system', 'pe.carla', 'pe.dan']));
    const byCarla = await decide(approval.id, carla);
    expect(byCarla.status).toBe(403);
    expect(byCarla.body.rule).toBe('uploaded this version');
    const byDan = await decide(approval.id, dan);
    expect(byDan.status).toBe(403);
    expect(byDan.body.rule).toBe('submitted this version');
    // A library whose only named approver uploaded through the system leaves nobody to approve: submit is refused.
    const own = await version(1, camSystem, 'pe.carla', ['pe.carla']);
    const refused = await call('POST', cam, `/api/v1/versions/${own}/submit`);
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ eligibleApproversLeft: 0, required: 1 });
  });

  it('PV-22 one person approves once, whether in person or through a system declaring them', async () => {
    const v = await version(2, cam);
    const approval = await submit(v, cam);
    expect((await decide(approval.id, qms, 'pe.carla')).status).toBe(200);
    const again = await decide(approval.id, carla);
    expect(again.status).toBe(409);
    expect((await call('GET', admin, `/api/v1/approvals/${approval.id}`)).body).toMatchObject({ state: 'pending', approvals: 1 });
    expect((await decide(approval.id, dan)).status).toBe(200);
  });
});
