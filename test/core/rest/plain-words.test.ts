/**
 * Validation errors of the /api/v1 surface in plant words: each bad field a
 * sentence a person reads, the problem's detail made of them, and the
 * machine-readable field list (field, accepted) kept as it was.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { detailInWords, fieldInWords, issueInWords } from '../../../core/rest/plain-words.js';
import { startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, type Session } from '../../fixtures/programs-accounts.js';

const sentences = (schema: z.ZodType, input: unknown, location = 'body') => {
  const parsed = schema.safeParse(input, { reportInput: true });
  if (parsed.success) throw new Error('expected issues');
  return parsed.error.issues.map((issue) => issueInWords(location, issue, 'input' in issue ? issue.input : undefined));
};

describe('validation errors in plant words', () => {
  it('names a field in words: camel case spelled out, list entries by their place', () => {
    expect(fieldInWords('body', ['password'])).toBe('the password');
    expect(fieldInWords('body', ['assignmentIds', 1])).toBe('the 2nd entry of the assignment IDs');
    expect(fieldInWords('body', ['transform', 'header', 0])).toBe('the 1st entry of the header');
    expect(fieldInWords('query', ['limit'])).toBe('the limit in the query');
    expect(fieldInWords('body', [])).toBe('the request body');
  });

  it('says what each kind of bad value needs, in a sentence, and never quotes a secret', () => {
    const schema = z.object({
      password: z.string().min(10), name: z.string().min(1).max(8), role: z.enum(['admin', 'operator']), limit: z.number().int().min(1).max(1000),
      ids: z.array(z.string()).min(1), when: z.iso.datetime(), mode: z.literal('auto'), secret: z.number(),
    }).strict();
    expect(sentences(schema, { password: 'short', name: '', role: 'boss', limit: 1.5, ids: [], when: 'today', mode: 'x', secret: 'hunter2', extra: 1 })).toEqual([
      'The password needs at least 10 characters',
      'The name cannot be empty',
      'The role must be one of admin, operator (it was "boss")',
      'The limit must be a whole number (it was 1.5)',
      'The IDs must hold at least 1 entry',
      'The when must be a date and time such as 2026-11-24T09:00:00Z',
      'The mode must be auto (it was "x")',
      'The secret must be a number',
      'The request body has a field this request does not take: extra',
    ]);
    expect(sentences(schema.partial(), { name: 'much too long', limit: 5000 })).toEqual(['The name can have at most 8 characters', 'The limit must be at most 1000']);
    expect(sentences(z.object({ password: z.string() }), {})).toEqual(['The password is missing']);
  });

  it('makes the detail of the first sentences and counts the rest', () => {
    expect(detailInWords(['The password needs at least 10 characters'], 1)).toBe('The password needs at least 10 characters.');
    expect(detailInWords(['A', 'B', 'C', 'D'], 6)).toBe('A. B. C. And 3 more problems, listed in errors.');
  });

  describe('on the program service', () => {
    let svc: TestProgramService;
    let admin: Session;
    beforeAll(async () => {
      svc = await startTestProgramService({ plugins: [TEST_ACCOUNTS], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD } });
      admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    });
    afterAll(async () => {
      await svc?.stop();
    });

    it('PV-70 a bad request is an RFC 9457 problem whose detail and field messages are sentences, with the field list kept', async () => {
      const res = await svc.request('POST', '/api/v1/admin/users', { cookie: admin.cookie, headers: admin.headers, body: { username: 'eva', password: 'short-pw', role: 'boss' } });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ type: expect.stringMatching(/\/invalid-request$/), title: 'The request is invalid', status: 400, instance: '/api/v1/admin/users' });
      expect(res.body.detail).toBe('The password needs at least 10 characters. The role must be one of admin, programmer, approver, operator, auditor, integration (it was "boss").');
      expect(res.body.errors).toEqual([
        { field: 'body.password', message: 'The password needs at least 10 characters' },
        { field: 'body.role', message: 'The role must be one of admin, programmer, approver, operator, auditor, integration (it was "boss")', accepted: 'admin, programmer, approver, operator, auditor, integration' },
      ]);
      expect(res.text).not.toContain('short-pw');
    });
  });
});
