/**
 * U+0000 (NUL) in a text field is refused at the edge of the program
 * service with a 400 naming the field, in a body (JSON `"\u0000"`), a query
 * filter (`%00`) or a path parameter, before anything reaches the database:
 * PostgreSQL's text cannot hold it (it answered 500, and `/audit/export` was
 * cut after its 200), and SQLite's C functions read it as the end of the
 * string. This file runs on SQLite in the suite and on PostgreSQL in
 * `npm run test:peers` (vitest.programs-postgres.config.ts), so both engines
 * answer the same. Bytes travel as base64, where NUL is any other byte.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { auditApiPlugin } from '../../../plugins/audit-api/index.js';
import { vaultPlugin } from '../../../plugins/vault/index.js';
import { createWebhooksPlugin } from '../../../plugins/webhooks/index.js';
import { startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, type Session } from '../../fixtures/programs-accounts.js';

const NUL_ERROR = (field: string) => [{ field, message: 'holds U+0000 (NUL), which no text field takes', accepted: 'text without U+0000 (bytes go as base64 where an operation takes bytes)' }];

describe('U+0000 in text is refused at the edge of the program service, on either engine', () => {
  let svc: TestProgramService;
  let admin: Session;
  let programId: string;
  const logged: { level: number; msg: string }[] = [];

  beforeAll(async () => {
    const logger = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line) as (typeof logged)[number]) });
    svc = await startTestProgramService({ plugins: [TEST_ACCOUNTS, vaultPlugin, auditApiPlugin, createWebhooksPlugin()], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, logger });
    admin = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    const library = await svc.request('POST', '/api/v1/libraries', { cookie: admin.cookie, headers: admin.headers, body: { name: 'Flanges', approvalPolicy: { mode: 'autoRelease' } } });
    expect(library.status).toBe(201);
    const program = await svc.request('POST', '/api/v1/programs', { cookie: admin.cookie, headers: admin.headers, body: { libraryId: library.body.id, name: 'O1234', controller: 'fanuc' } });
    expect(program.status).toBe(201);
    programId = program.body.id as string;
  });
  afterAll(() => svc?.stop());

  const post = (path: string, body: unknown) => svc.request('POST', path, { cookie: admin.cookie, headers: admin.headers, body });
  const get = (path: string) => svc.request('GET', path, { cookie: admin.cookie, unchecked: true });

  it('in a body: a library description, version notes, a webhook description, a field name; each a 400 naming the field, nothing stored', async () => {
    const library = await post('/api/v1/libraries', { name: 'Shafts', description: 'left\u0000right' });
    expect(library.status).toBe(400);
    expect(library.body.errors).toEqual(NUL_ERROR('body.description'));
    expect(library.body.detail).toBe('request body: body.description holds U+0000 (NUL), which no text field takes');
    const version = await post(`/api/v1/programs/${programId}/versions`, { contentBase64: Buffer.from('O1234\n\u0000M30\n').toString('base64'), notes: 'rev\u0000B' });
    expect(version.status).toBe(400);
    expect(version.body.errors).toEqual(NUL_ERROR('body.notes'));
    const webhook = await post('/api/v1/admin/webhooks', { url: 'https://hooks.example.com/cnc', events: ['version.approved'], description: '\u0000' });
    expect(webhook.status).toBe(400);
    expect(webhook.body.errors).toEqual(NUL_ERROR('body.description'));
    const key = await post('/api/v1/libraries', { name: 'Shafts', ['note\u0000']: 1 });
    expect(key.status).toBe(400);
    expect(key.body.errors[0].field).toBe('body.note\\u0000 (field name)');

    expect((await get('/api/v1/libraries')).body.items.map((l: { name: string }) => l.name)).toEqual(['Flanges']);
    expect((await get('/api/v1/admin/webhooks')).body.items).toEqual([]);
    // The bytes of a program may hold NUL: they travel as base64.
    const bytes = await post(`/api/v1/programs/${programId}/versions`, { contentBase64: Buffer.from('O1234\n\u0000M30\n').toString('base64'), notes: 'with a NUL byte' });
    expect(bytes.status).toBe(201);
  });

  it('in a query filter: every audit filter, the export included, is a 400 naming the query field instead of a 500 or a cut file', async () => {
    for (const field of ['principalName', 'machine', 'entityType', 'entityId', 'category']) {
      for (const path of [`/api/v1/audit?${field}=a%00b`, `/api/v1/audit/export?format=csv&${field}=%00`]) {
        const res = await get(path);
        expect(res.status, path).toBe(400);
        expect(res.body.errors, path).toEqual(NUL_ERROR(`query.${field}`));
      }
    }
    const list = await get('/api/v1/programs?libraryId=lib%00');
    expect(list.status).toBe(400);
    expect(list.body.errors).toEqual(NUL_ERROR('query.libraryId'));
  });

  it('in a path parameter: a 400 naming the path', async () => {
    const res = await get(`/api/v1/programs/${programId}%00`);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual(NUL_ERROR('path.id'));
  });

  it('nothing of it is logged as a failure', () => {
    expect(logged.filter((l) => l.level >= 50)).toEqual([]);
  });
});
