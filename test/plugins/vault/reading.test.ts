/**
 * What an approver reads before signing, over real HTTP: a version's whole
 * text decoded as the preview decodes it (with its encoding and its line
 * endings as they are), its exact bytes saved under the program's name, and
 * a diff of every line, comment-only lines included.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { vaultPlugin } from '../../../plugins/vault/index.js';
import { startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, userSession, type Session } from '../../fixtures/programs-accounts.js';

/** A tape program with a Windows-1252 comment (Ø is 0xD8) and CRLF line endings. */
const V1 = Buffer.from('%\r\nO1001 (FLANGE \xd8 25)\r\n(CLAMP ON THE LEFT JAW)\r\nG90 G54\r\nG01 X10. F250\r\nM30\r\n%\r\n', 'latin1');
/** The same program with only its comment-only line changed. */
const V2 = Buffer.from('%\r\nO1001 (FLANGE \xd8 25)\r\n(CLAMP ON THE RIGHT JAW)\r\nG90 G54\r\nG01 X10. F250\r\nM30\r\n%\r\n', 'latin1');

describe('what an approver reads', () => {
  let svc: TestProgramService;
  let admin: Session;
  let approver: Session;
  let programId: string;
  let v1: string;
  let v2: string;

  const post = (path: string, body?: unknown) => svc.request('POST', path, { cookie: admin.cookie, headers: admin.headers, ...(body !== undefined ? { body } : {}) });
  const get = (path: string) => svc.request('GET', path, { cookie: approver.cookie });

  beforeAll(async () => {
    svc = await startTestProgramService({ plugins: [TEST_ACCOUNTS, vaultPlugin], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD } });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    approver = await userSession(svc, admin, 'pe.carla', 'approver');
    const lib = await post('/api/v1/libraries', { name: 'Flanges', approvalPolicy: { mode: 'approvals', required: 1 } });
    programId = (await post('/api/v1/programs', { libraryId: lib.body.id, name: 'O1001 Flange OP10', controller: 'fanuc' })).body.id;
    v1 = (await post(`/api/v1/programs/${programId}/versions`, { contentBase64: V1.toString('base64'), notes: '' })).body.id;
    v2 = (await post(`/api/v1/programs/${programId}/versions`, { contentBase64: V2.toString('base64'), notes: '' })).body.id;
  });
  afterAll(() => svc?.stop());

  it('PV-31 GET /versions/{id}/text: the whole text of a first version as the preview reads it, with its encoding and CR LF kept', async () => {
    const res = await get(`/api/v1/versions/${v1}/text`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ text: '%\r\nO1001 (FLANGE Ø 25)\r\n(CLAMP ON THE LEFT JAW)\r\nG90 G54\r\nG01 X10. F250\r\nM30\r\n%\r\n', encoding: 'windows-1252', sha256: expect.stringMatching(/^[0-9a-f]{64}$/), size: V1.length });
  });

  it('PV-31 the download is the exact bytes, saved under the program\'s name and the version\'s number', async () => {
    const res = await get(`/api/v1/versions/${v2}/content`);
    expect(res.raw.equals(V2)).toBe(true);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="O1001_Flange_OP10-v2.nc"');
  });

  it('PV-31 the diff of every line shows a change to a comment-only line, which the NC-aware diff does not compare', async () => {
    const blocks = await get(`/api/v1/programs/${programId}/diff?from=${v1}&to=${v2}`);
    expect(blocks.body.identical).toBe(true);
    const lines = await get(`/api/v1/programs/${programId}/diff?from=${v1}&to=${v2}&compare=lines`);
    expect(lines.status).toBe(200);
    expect(lines.body.identical).toBe(false);
    expect(lines.body.hunks).toHaveLength(1);
    expect(lines.body.hunks[0].lines).toEqual([
      { op: ' ', fromLine: 1, toLine: 1, text: '%' },
      { op: ' ', fromLine: 2, toLine: 2, text: 'O1001 (FLANGE \xd8 25)' },
      { op: '-', fromLine: 3, text: '(CLAMP ON THE LEFT JAW)' },
      { op: '+', toLine: 3, text: '(CLAMP ON THE RIGHT JAW)' },
      { op: ' ', fromLine: 4, toLine: 4, text: 'G90 G54' },
      { op: ' ', fromLine: 5, toLine: 5, text: 'G01 X10. F250' },
      { op: ' ', fromLine: 6, toLine: 6, text: 'M30' },
    ]);
    // What changes on the machine is read as before: nothing.
    expect(lines.body.summary).toMatchObject({ tools: { added: [], removed: [] }, feeds: [], spindleSpeeds: [] });
  });
});
