/**
 * The program vault over real HTTP, signed in through the accounts plugin;
 * every response is checked against the OpenAPI document.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { vaultPlugin } from '../../../plugins/vault/index.js';
import { MAX_VERSION_BYTES } from '../../../plugins/vault/operations/index.js';
import { openProgramsDatabase, startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, userSession, type Session } from '../../fixtures/programs-accounts.js';

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
const b64 = (b: Buffer | string): string => Buffer.from(b).toString('base64');

const PROGRAM_A = Buffer.from('%\r\nO1001 (BRACKET)\r\nN10 G90 G54 G00 X0 Y0\r\nN20 T1 M06\r\nN30 S1200 M03\r\nN40 G01 Z-5. F200\r\nN50 M30\r\n%\r\n', 'latin1');
const PROGRAM_B = Buffer.from('%\r\nO1001 (BRACKET REV B)\r\nN10 G90 G55 G0 X0 Y0\r\nN20 T2 M6\r\nN30 S1500 M3\r\nN40 G1 Z-5.000 F250\r\nN45 M08\r\nN50 M30\r\n%\r\n', 'latin1');

describe('the program vault', () => {
  let svc: TestProgramService;
  let admin: Session;
  let cam: Session;
  let cam2: Session;
  let approver1: Session;
  let approver2: Session;
  let auditor: Session;

  const post = (s: Session, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    svc.request('POST', path, { cookie: s.cookie, headers: { ...s.headers, ...headers }, ...(body !== undefined ? { body } : {}) });
  const get = (s: Session, path: string, headers: Record<string, string> = {}) => svc.request('GET', path, { cookie: s.cookie, headers });

  const library = async (name: string, approvalPolicy: unknown, approvers: string[] = []) => {
    const res = await post(admin, '/api/v1/libraries', { name, approvalPolicy, approvers });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const program = async (libraryId: string, name: string, by: Session = cam) => {
    const res = await post(by, '/api/v1/programs', { libraryId, name, controller: 'fanuc', description: 'test part' });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const upload = async (programId: string, content: Buffer, by: Session = cam, notes = 'n') => {
    const res = await post(by, `/api/v1/programs/${programId}/versions`, { contentBase64: b64(content), notes });
    expect(res.status).toBe(201);
    return res.body;
  };
  const versionBytes = async (versionId: string): Promise<Buffer> => (await get(auditor, `/api/v1/versions/${versionId}/content`)).raw;

  beforeAll(async () => {
    svc = await startTestProgramService({ plugins: [TEST_ACCOUNTS, vaultPlugin], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD } });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    cam = await userSession(svc, admin, 'cam.anna', 'programmer');
    cam2 = await userSession(svc, admin, 'cam.ben', 'programmer');
    approver1 = await userSession(svc, admin, 'pe.carla', 'approver');
    approver2 = await userSession(svc, admin, 'pe.dan', 'approver');
    auditor = await userSession(svc, admin, 'audit.eve', 'auditor');
  });
  afterAll(() => svc.stop());

  it('PV-11 PV-31 an upload takes contentBase64 and notes and returns 201 with the version and its id; content comes back byte-exact with an ETag of its hash', async () => {
    const lib = await library('Brackets', { mode: 'approvals', required: 1 });
    const prg = await program(lib, 'O1001');
    const v = await upload(prg, PROGRAM_A, cam, 'first cut');
    expect(v).toMatchObject({ id: expect.stringMatching(/^ver_[0-9a-f]{16}$/), number: 1, state: 'draft', size: PROGRAM_A.length, sha256: sha256(PROGRAM_A), notes: 'first cut', author: 'cam.anna', programId: prg, libraryId: lib });
    const content = await get(auditor, `/api/v1/versions/${v.id}/content`);
    expect(content.headers.get('content-type')).toBe('application/octet-stream');
    expect(content.headers.get('etag')).toBe(`"${sha256(PROGRAM_A)}"`);
    expect(Buffer.compare(content.raw, PROGRAM_A)).toBe(0);
    const notModified = await get(auditor, `/api/v1/versions/${v.id}/content`, { 'if-none-match': `"${sha256(PROGRAM_A)}"` });
    expect(notModified.status).toBe(304);
    expect(notModified.raw.length).toBe(0);
    const asJson = await get(auditor, `/api/v1/versions/${v.id}/content?format=base64`);
    expect(asJson.body).toEqual({ contentBase64: b64(PROGRAM_A), sha256: sha256(PROGRAM_A), size: PROGRAM_A.length });
    const second = await upload(prg, PROGRAM_B);
    expect(second.number).toBe(2);
    const list = await get(auditor, `/api/v1/programs/${prg}/versions`);
    expect(list.body.items.map((x: { number: number }) => x.number)).toEqual([2, 1]);
    expect((await get(auditor, `/api/v1/versions/${v.id}`)).body.id).toBe(v.id);
    expect((await get(auditor, `/api/v1/programs?libraryId=${lib}`)).body.items.map((x: { id: string }) => x.id)).toEqual([prg]);
    expect((await get(auditor, '/api/v1/libraries')).body.items.some((x: { id: string }) => x.id === lib)).toBe(true);
  });

  it('PV-11 keeps line endings, tape markers and non-UTF-8 bytes exactly; refuses bad base64 and content over the limit', async () => {
    const lib = await library('Bytes', { mode: 'autoRelease' });
    const prg = await program(lib, 'O2000');
    const odd = Buffer.concat([Buffer.from('%\nO2000\rG1 X1.\n'), Buffer.from([0xe4, 0xf6, 0xfc, 0x00, 0xff]), Buffer.from('\r\n%')]);
    const v = await upload(prg, odd);
    expect(Buffer.compare(await versionBytes(v.id), odd)).toBe(0);
    const bad = await post(cam, `/api/v1/programs/${prg}/versions`, { contentBase64: 'not base64!', notes: '' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('body.contentBase64');
    const unpadded = await post(cam, `/api/v1/programs/${prg}/versions`, { contentBase64: 'QUJD\nREVG', notes: '' });
    expect(unpadded.status).toBe(400);
    const tooBig = await post(cam, `/api/v1/programs/${prg}/versions`, { contentBase64: b64(Buffer.alloc(MAX_VERSION_BYTES + 1, 0x41)), notes: '' });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.errors[0]).toMatchObject({ field: 'body.contentBase64', accepted: `at most ${MAX_VERSION_BYTES} bytes` });
    const atLimit = await post(cam, `/api/v1/programs/${prg}/versions`, { contentBase64: b64(Buffer.alloc(MAX_VERSION_BYTES, 0x42)), notes: 'largest' });
    expect(atLimit.status).toBe(201);
    expect(atLimit.body.size).toBe(MAX_VERSION_BYTES);
  });

  it('PV-20 PV-21 submit in an auto-release library publishes at once, with no approval step', async () => {
    const lib = await library('Auto', { mode: 'autoRelease' });
    const prg = await program(lib, 'O3000');
    const v = await upload(prg, PROGRAM_A);
    const res = await post(cam, `/api/v1/versions/${v.id}/submit`);
    expect(res.status).toBe(200);
    expect(res.body.approval).toBeNull();
    expect(res.body.version).toMatchObject({ state: 'published', submittedBy: 'cam.anna', publishedAt: expect.any(String) });
    const pending = await get(auditor, `/api/v1/approvals?libraryId=${lib}`);
    expect(pending.body.items).toEqual([]);
  });

  it('PV-20 PV-22 PV-32 otherwise submit opens an approval that N different approvers decide; then the version is published', async () => {
    const lib = await library('Two approvals', { mode: 'approvals', required: 2 });
    const prg = await program(lib, 'O4000');
    const v = await upload(prg, PROGRAM_A);
    const submitted = await post(cam2, `/api/v1/versions/${v.id}/submit`);
    expect(submitted.body.version).toMatchObject({ state: 'submitted', submittedBy: 'cam.ben' });
    const approvalId = submitted.body.approval.id as string;
    expect(submitted.body.approval).toMatchObject({ state: 'pending', required: 2, approvals: 0, excluded: ['cam.anna', 'cam.ben'], eligibleApproversLeft: null });
    const listed = await get(approver1, '/api/v1/approvals?state=pending');
    expect(listed.body.items.map((a: { id: string }) => a.id)).toContain(approvalId);
    const first = await post(approver1, `/api/v1/approvals/${approvalId}/decide`, { decision: 'approve', comment: 'feeds checked' });
    expect(first.status).toBe(200);
    expect(first.body.approval).toMatchObject({ state: 'pending', approvals: 1 });
    expect(first.body.version.state).toBe('submitted');
    const twice = await post(approver1, `/api/v1/approvals/${approvalId}/decide`, { decision: 'approve', comment: 'again' });
    expect(twice.status).toBe(409);
    expect(twice.body.detail).toMatch(/2 different approvers/);
    const second = await post(approver2, `/api/v1/approvals/${approvalId}/decide`, { decision: 'approve', comment: 'ok' });
    expect(second.body.approval).toMatchObject({ state: 'approved', approvals: 2 });
    expect(second.body.version.state).toBe('published');
    const late = await post(admin, `/api/v1/approvals/${approvalId}/decide`, { decision: 'reject', comment: '' });
    expect(late.status).toBe(409);
    expect(late.body.state).toBe('approved');
    expect((await get(auditor, `/api/v1/approvals/${approvalId}`)).body.decisions.map((d: { approver: string }) => d.approver)).toEqual(['pe.carla', 'pe.dan']);
  });

  it('PV-22 a rejection sends the version back to draft, to be submitted again', async () => {
    const lib = await library('Reject', { mode: 'approvals', required: 1 });
    const v = await upload(await program(lib, 'O5000'), PROGRAM_A);
    const approvalId = (await post(cam, `/api/v1/versions/${v.id}/submit`)).body.approval.id;
    const rejected = await post(approver1, `/api/v1/approvals/${approvalId}/decide`, { decision: 'reject', comment: 'wrong offset' });
    expect(rejected.body.approval.state).toBe('rejected');
    expect(rejected.body.version).toMatchObject({ state: 'draft', submittedBy: null });
    const again = await post(cam, `/api/v1/versions/${v.id}/submit`);
    expect(again.body.version.state).toBe('submitted');
    expect(again.body.approval.id).not.toBe(approvalId);
  });

  it('PV-22 separation of duties: neither the uploader nor the submitter may approve, and the problem says when nobody eligible is left', async () => {
    const lib = await library('SoD', { mode: 'approvals', required: 1 });
    const v = await upload(await program(lib, 'O6000', admin), PROGRAM_A, admin);
    const approvalId = (await post(cam, `/api/v1/versions/${v.id}/submit`)).body.approval.id;
    const byUploader = await post(admin, `/api/v1/approvals/${approvalId}/decide`, { decision: 'approve', comment: '' });
    expect(byUploader.status).toBe(403);
    expect(byUploader.body).toMatchObject({ type: expect.stringMatching(/\/separation-of-duties$/), rule: 'uploaded this version' });
    const adminToo = await userSession(svc, admin, 'admin.two', 'admin');
    const v2 = await upload(await program(lib, 'O6001', adminToo), PROGRAM_A, adminToo);
    const a2 = (await post(adminToo, `/api/v1/versions/${v2.id}/submit`)).body.approval.id;
    const bySubmitter = await post(adminToo, `/api/v1/approvals/${a2}/decide`, { decision: 'approve', comment: '' });
    expect(bySubmitter.status).toBe(403);
    expect(bySubmitter.body.rule).toBe('uploaded this version');
    const v3 = await upload(await program(lib, 'O6002'), PROGRAM_A, cam);
    const a3 = (await post(adminToo, `/api/v1/versions/${v3.id}/submit`)).body.approval.id;
    const bySubmitter3 = await post(adminToo, `/api/v1/approvals/${a3}/decide`, { decision: 'approve', comment: '' });
    expect(bySubmitter3.body.rule).toBe('submitted this version');

    // A library naming its approvers: with the only approver being the uploader, nobody is left.
    const named = await library('Named', { mode: 'approvals', required: 1 }, ['pe.carla']);
    const prg = await program(named, 'O6100');
    const own = await upload(prg, PROGRAM_A, cam);
    const ok = await post(cam, `/api/v1/versions/${own.id}/submit`);
    expect(ok.body.approval.eligibleApproversLeft).toBe(1);
    const notNamed = await post(approver2, `/api/v1/approvals/${ok.body.approval.id}/decide`, { decision: 'approve', comment: '' });
    expect(notNamed.status).toBe(403);
    expect(notNamed.body.detail).toMatch(/not one of the approvers/);
    const onlyApprover = await library('Only Anna', { mode: 'approvals', required: 1 }, ['cam.anna']);
    const self = await upload(await program(onlyApprover, 'O6200'), PROGRAM_A, cam);
    const nobody = await post(cam, `/api/v1/versions/${self.id}/submit`);
    expect(nobody.status).toBe(422);
    expect(nobody.body).toMatchObject({ eligibleApproversLeft: 0, required: 1 });
    expect(nobody.body.detail).toMatch(/nobody eligible is left/);
    expect((await get(auditor, `/api/v1/versions/${self.id}`)).body.state).toBe('draft');
  });

  it('PV-20 a transition the state does not allow is 409 with the current state; obsolete cancels the open approval', async () => {
    const lib = await library('States', { mode: 'approvals', required: 1 });
    const v = await upload(await program(lib, 'O7000'), PROGRAM_A);
    const approvalId = (await post(cam, `/api/v1/versions/${v.id}/submit`)).body.approval.id;
    const resubmit = await post(cam, `/api/v1/versions/${v.id}/submit`);
    expect(resubmit.status).toBe(409);
    expect(resubmit.body).toMatchObject({ type: expect.stringMatching(/\/state-conflict$/), state: 'submitted' });
    const obsolete = await post(approver1, `/api/v1/versions/${v.id}/obsolete`, { reason: 'superseded' });
    expect(obsolete.body.state).toBe('obsolete');
    expect((await get(auditor, `/api/v1/approvals/${approvalId}`)).body.state).toBe('cancelled');
    const again = await post(approver1, `/api/v1/versions/${v.id}/obsolete`);
    expect(again.status).toBe(409);
    expect(again.body.state).toBe('obsolete');
    const decide = await post(approver1, `/api/v1/approvals/${approvalId}/decide`, { decision: 'approve', comment: '' });
    expect(decide.status).toBe(409);
    expect(decide.body.state).toBe('cancelled');
  });

  it('PV-20 no operation changes a version\'s bytes: the hash holds through every transition', async () => {
    const lib = await library('Immutable', { mode: 'approvals', required: 1 });
    const prg = await program(lib, 'O8000');
    const v = await upload(prg, PROGRAM_B);
    const check = async () => {
      const bytes = await versionBytes(v.id);
      expect(sha256(bytes)).toBe(v.sha256);
      expect((await get(auditor, `/api/v1/versions/${v.id}`)).body).toMatchObject({ sha256: v.sha256, size: v.size, number: 1 });
    };
    await check();
    const approvalId = (await post(cam, `/api/v1/versions/${v.id}/submit`)).body.approval.id;
    await check();
    await post(approver1, `/api/v1/approvals/${approvalId}/decide`, { decision: 'approve', comment: '' });
    await check();
    await svc.request('PATCH', `/api/v1/programs/${prg}`, { cookie: cam.cookie, headers: cam.headers, body: { name: 'O8000-renamed' } });
    await check();
    await post(approver1, `/api/v1/versions/${v.id}/obsolete`);
    await check();
  });

  it('PV-54 outside the scope is 404 exactly as if missing; inside the scope but beyond the role is 403', async () => {
    const visible = await library('Scoped A', { mode: 'autoRelease' });
    const hidden = await library('Scoped B', { mode: 'autoRelease' });
    const hiddenProgram = await program(hidden, 'O9000');
    const hiddenVersion = await upload(hiddenProgram, PROGRAM_A);
    const scoped = await userSession(svc, admin, 'cam.scoped', 'programmer', { libraries: [visible] });
    const missing = await get(scoped, '/api/v1/programs/prg_0000000000000000');
    const outside = await get(scoped, `/api/v1/programs/${hiddenProgram}`);
    expect(outside.status).toBe(404);
    expect(outside.body.detail.replace(hiddenProgram, 'X')).toBe(missing.body.detail.replace('prg_0000000000000000', 'X'));
    expect((await get(scoped, `/api/v1/versions/${hiddenVersion.id}/content`)).status).toBe(404);
    expect((await get(scoped, `/api/v1/libraries/${hidden}`)).status).toBe(404);
    const lists = await get(scoped, '/api/v1/libraries');
    expect(lists.body.items.map((l: { id: string }) => l.id)).toEqual([visible]);
    expect((await get(scoped, '/api/v1/programs')).body.items).toEqual([]);
    const createOutside = await post(scoped, '/api/v1/programs', { libraryId: hidden, name: 'sneaky', controller: 'fanuc' });
    expect(createOutside.status).toBe(404);
    expect(createOutside.body.errors[0].field).toBe('body.libraryId');
    const beyondRole = await post(scoped, '/api/v1/libraries', { name: 'mine' });
    expect(beyondRole.status).toBe(403);
    const inScope = await post(scoped, '/api/v1/programs', { libraryId: visible, name: 'allowed', controller: 'siemens' });
    expect(inScope.status).toBe(201);
    const auditorUpload = await post(auditor, `/api/v1/programs/${inScope.body.id}/versions`, { contentBase64: b64('G1'), notes: '' });
    expect(auditorUpload.status).toBe(403);
  });

  it('PV-31 the diff endpoint compares two versions NC-aware and offers the plain unified text', async () => {
    const lib = await library('Diffs', { mode: 'autoRelease' });
    const prg = await program(lib, 'O1001');
    const a = await upload(prg, PROGRAM_A);
    const b = await upload(prg, PROGRAM_B);
    const diff = await get(auditor, `/api/v1/programs/${prg}/diff?from=${a.id}&to=${b.id}`);
    expect(diff.status).toBe(200);
    expect(diff.body.from).toMatchObject({ versionId: a.id, number: 1, sha256: sha256(PROGRAM_A) });
    expect(diff.body.identical).toBe(false);
    const s = diff.body.summary;
    expect(s.tools.added).toEqual(['2']);
    expect(s.tools.removed).toEqual(['1']);
    expect(s.spindleSpeeds[0]).toMatchObject({ from: 1200, to: 1500, changePercent: 25 });
    expect(s.feeds[0]).toMatchObject({ from: 200, to: 250, changePercent: 25 });
    expect(s.workOffsets.added.map((c: { code: string }) => c.code)).toContain('G55');
    expect(s.mCodes.added.map((c: { code: string }) => c.code)).toContain('M8');
    // G0 = G00, M6 = M06, Z-5.000 = Z-5. are not changes by themselves.
    const same = await get(auditor, `/api/v1/programs/${prg}/diff?from=${a.id}&to=${a.id}`);
    expect(same.body.identical).toBe(true);
    const unified = await get(auditor, `/api/v1/programs/${prg}/diff?from=${a.id}&to=${b.id}&format=unified`);
    expect(unified.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(unified.text).toMatch(/^--- /);
    expect(unified.text).toContain('+N45 M08');
    const other = await upload(await program(lib, 'O1002'), PROGRAM_A);
    const wrong = await get(auditor, `/api/v1/programs/${prg}/diff?from=${a.id}&to=${other.id}`);
    expect(wrong.status).toBe(404);
    expect(wrong.body.errors[0].field).toBe('query.to');
    const missing = await get(auditor, `/api/v1/programs/${prg}/diff?from=${a.id}`);
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0].field).toBe('query.to');
  });

  it('PV-31 a program with a published version cannot be deleted (409); a draft-only one can, and deletion is high-risk', async () => {
    const lib = await library('Deletes', { mode: 'autoRelease' });
    const published = await program(lib, 'O1100');
    const pv = await upload(published, PROGRAM_A);
    await post(cam, `/api/v1/versions/${pv.id}/submit`);
    const refused = await svc.request('DELETE', `/api/v1/programs/${published}`, { cookie: cam.cookie, headers: cam.headers });
    expect(refused.status).toBe(409);
    expect(refused.body.state).toBe('published');
    const drafts = await program(lib, 'O1101');
    await upload(drafts, PROGRAM_A);
    const token = await svc.request('POST', '/api/v1/admin/service-tokens', { cookie: admin.cookie, headers: admin.headers, body: { name: 'cam system', role: 'integration', requiresOperator: true } });
    const noOperator = await svc.request('DELETE', `/api/v1/programs/${drafts}`, { token: token.body.token });
    expect(noOperator.status).toBe(403);
    expect(noOperator.body.type).toMatch(/\/operator-required$/);
    const deleted = await svc.request('DELETE', `/api/v1/programs/${drafts}`, { token: token.body.token, headers: { 'x-on-behalf-of': 'anna' } });
    expect(deleted.status).toBe(204);
    expect((await get(auditor, `/api/v1/programs/${drafts}`)).status).toBe(404);
  });

  it('PV-40 every change writes its audit record in the same transaction; a change that fails leaves none', async () => {
    const lib = await library('Audited', { mode: 'autoRelease' });
    const prg = await program(lib, 'O1200');
    const v = await upload(prg, PROGRAM_A);
    await post(cam, `/api/v1/versions/${v.id}/submit`);
    const db = await openProgramsDatabase(svc.dataDir);
    try {
      const rows = await db.all<{ action: string; entity_id: string; principal_name: string }>('SELECT action, entity_id, principal_name FROM audit_log WHERE entity_id IN (?, ?, ?) ORDER BY seq', [lib, prg, v.id]);
      expect(rows.map((r) => r.action)).toEqual(['library.create', 'program.create', 'version.upload', 'version.submit', 'version.publish']);
      const before = (await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM audit_log'))?.n;
      // A duplicate program name fails before writing; a version insert that the database refuses rolls back with its audit record.
      const postgres = db.dialect.engine === 'postgres';
      await db.write(async (tx) => {
        if (!postgres) return tx.run("CREATE TRIGGER refuse_versions BEFORE INSERT ON vault_versions WHEN NEW.notes = 'refuse' BEGIN SELECT RAISE(ABORT, 'refused'); END");
        await tx.run("CREATE FUNCTION refuse_versions() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$");
        return tx.run("CREATE TRIGGER refuse_versions BEFORE INSERT ON vault_versions FOR EACH ROW WHEN (NEW.notes = 'refuse') EXECUTE FUNCTION refuse_versions()");
      }, { transaction: true });
      // The forced database failure answers 500, which the document rightly does not list: this one response is not checked against it.
      const failed = await svc.request('POST', `/api/v1/programs/${prg}/versions`, { cookie: cam.cookie, headers: cam.headers, body: { contentBase64: b64(PROGRAM_B), notes: 'refuse' }, unchecked: true });
      expect(failed.status).toBe(500);
      await db.write((tx) => tx.run(postgres ? 'DROP TRIGGER refuse_versions ON vault_versions' : 'DROP TRIGGER refuse_versions'));
      const after = (await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM audit_log'))?.n;
      expect(after).toBe(before);
      expect((await get(auditor, `/api/v1/programs/${prg}/versions`)).body.items).toHaveLength(1);
    } finally {
      await db.close();
    }
  });
});
