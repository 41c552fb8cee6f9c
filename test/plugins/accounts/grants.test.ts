/**
 * What a caller may grant: every role × {create user, create token, update
 * user, update self} × {narrower, equal, wider scope, higher role}, over real
 * HTTP, then the other ways a grant could widen (a foreign id, the other scope
 * kind, a token's operator requirement and expiry) and the accounts a caller
 * may not see. Every response is checked against the OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLE_NAMES, ROLE_PERMISSIONS, type RoleName } from '../../../plugins/accounts/roles.js';
import { grantableRoles } from '../../../plugins/accounts/grants.js';
import { startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, userSession, type Session } from '../../fixtures/programs-accounts.js';

const LIB_A = 'lib_aaaaaaaaaaaaaaaa';
const LIB_B = 'lib_bbbbbbbbbbbbbbbb';
const LIB_C = 'lib_cccccccccccccccc';
const GRP_1 = 'grp_1111111111111111';
const GRP_2 = 'grp_2222222222222222';
/** The scopes of every caller in the matrix. */
const CALLER_SCOPES = { libraries: [LIB_A, LIB_B], machineGroups: [GRP_1] };

type Op = 'createUser' | 'createToken' | 'updateUser' | 'updateSelf';
type Variant = 'narrower' | 'equal' | 'wider' | 'higherRole';
const VARIANTS: readonly Variant[] = ['narrower', 'equal', 'wider', 'higherRole'];

/**
 * The expected outcome of every cell. `201`/`200`: done. `403:forbidden`: the
 * role lacks users.manage or tokens.manage. `403:<field>`: refused as beyond
 * the caller's own rights (problem `beyond-own-rights`) naming that field.
 * `none`: no role lies above the caller's (checked against the role table).
 * Narrower: libraries [A] and no machine group; equal: the caller's scopes;
 * wider: libraries "*"; higher role: admin, with the caller's scopes.
 */
const MATRIX = `
role         op           narrower            equal          wider                       higherRole
admin        createUser   201                 201            403:body.scopes.libraries   none
admin        createToken  201                 201            403:body.scopes.libraries   none
admin        updateUser   200                 200            403:body.scopes.libraries   none
admin        updateSelf   403:body.scopes     200            403:body.scopes             none
programmer   createUser   403:forbidden       403:forbidden  403:forbidden               403:forbidden
programmer   createToken  403:forbidden       403:forbidden  403:forbidden               403:forbidden
programmer   updateUser   403:forbidden       403:forbidden  403:forbidden               403:forbidden
programmer   updateSelf   403:forbidden       403:forbidden  403:forbidden               403:forbidden
approver     createUser   403:forbidden       403:forbidden  403:forbidden               403:forbidden
approver     createToken  403:forbidden       403:forbidden  403:forbidden               403:forbidden
approver     updateUser   403:forbidden       403:forbidden  403:forbidden               403:forbidden
approver     updateSelf   403:forbidden       403:forbidden  403:forbidden               403:forbidden
operator     createUser   403:forbidden       403:forbidden  403:forbidden               403:forbidden
operator     createToken  403:forbidden       403:forbidden  403:forbidden               403:forbidden
operator     updateUser   403:forbidden       403:forbidden  403:forbidden               403:forbidden
operator     updateSelf   403:forbidden       403:forbidden  403:forbidden               403:forbidden
auditor      createUser   403:forbidden       403:forbidden  403:forbidden               403:forbidden
auditor      createToken  403:forbidden       403:forbidden  403:forbidden               403:forbidden
auditor      updateUser   403:forbidden       403:forbidden  403:forbidden               403:forbidden
auditor      updateSelf   403:forbidden       403:forbidden  403:forbidden               403:forbidden
integration  createUser   403:forbidden       403:forbidden  403:forbidden               403:forbidden
integration  createToken  403:forbidden       403:forbidden  403:forbidden               403:forbidden
integration  updateUser   403:forbidden       403:forbidden  403:forbidden               403:forbidden
integration  updateSelf   403:forbidden       403:forbidden  403:forbidden               403:forbidden
`;

interface Cell { role: RoleName; op: Op; variant: Variant; expected: string }
const CELLS: Cell[] = MATRIX.trim().split('\n').slice(1).flatMap((line) => {
  const [role, op, ...outcomes] = line.trim().split(/\s+/) as [RoleName, Op, ...string[]];
  return VARIANTS.map((variant, i) => ({ role, op, variant, expected: outcomes[i] as string }));
});

/** The role and scopes a cell asks for. */
function requested(caller: RoleName, variant: Variant): { role: RoleName; scopes: { libraries: '*' | string[]; machineGroups: '*' | string[] } } {
  switch (variant) {
    case 'narrower': return { role: caller, scopes: { libraries: [LIB_A], machineGroups: [] } };
    case 'equal': return { role: caller, scopes: CALLER_SCOPES };
    case 'wider': return { role: caller, scopes: { libraries: '*', machineGroups: [GRP_1] } };
    case 'higherRole': return { role: 'admin', scopes: CALLER_SCOPES };
  }
}

describe('what a caller may grant', () => {
  let svc: TestProgramService;
  let root: Session;
  const callers = new Map<RoleName, Session & { id: string }>();
  let n = 0;

  beforeAll(async () => {
    svc = await startTestProgramService({ plugins: [TEST_ACCOUNTS], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD } });
    root = await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD);
    for (const role of ROLE_NAMES) callers.set(role, await userSession(svc, root, `scoped.${role}`, role, CALLER_SCOPES));
  });
  afterAll(() => svc.stop());

  const users = async () => (await svc.request('GET', '/api/v1/admin/users?limit=1000', { cookie: root.cookie })).body.items as { id: string; username: string; role: string; scopes: unknown }[];
  const tokens = async () => (await svc.request('GET', '/api/v1/admin/service-tokens?limit=1000', { cookie: root.cookie })).body.items as { id: string; name: string; role: string; scopes: unknown }[];

  /** Runs a cell's request; returns the response and what the account holds afterwards (undefined: nothing was made). */
  async function run(cell: Cell) {
    const caller = callers.get(cell.role) as Session & { id: string };
    const want = requested(cell.role, cell.variant);
    const as = { cookie: caller.cookie, headers: caller.headers };
    n += 1;
    switch (cell.op) {
      case 'createUser': {
        const username = `made.${n}`;
        const res = await svc.request('POST', '/api/v1/admin/users', { ...as, body: { username, password: 'made-password-1', ...want } });
        return { res, want, after: (await users()).find((u) => u.username === username) };
      }
      case 'createToken': {
        const name = `made token ${n}`;
        const res = await svc.request('POST', '/api/v1/admin/service-tokens', { ...as, body: { name, ...want } });
        return { res, want, after: (await tokens()).find((t) => t.name === name) };
      }
      case 'updateUser': {
        const target = await svc.request('POST', '/api/v1/admin/users', { cookie: root.cookie, headers: root.headers, body: { username: `target.${n}`, password: 'target-password-1', role: 'operator', scopes: { libraries: [LIB_A], machineGroups: [GRP_1] } } });
        const res = await svc.request('PATCH', `/api/v1/admin/users/${target.body.id}`, { ...as, body: want });
        return { res, want, after: (await users()).find((u) => u.id === target.body.id), before: target.body };
      }
      case 'updateSelf': {
        const res = await svc.request('PATCH', `/api/v1/admin/users/${caller.id}`, { ...as, body: want });
        return { res, want, after: (await users()).find((u) => u.id === caller.id), before: { role: cell.role, scopes: CALLER_SCOPES } };
      }
    }
  }

  it.each(CELLS.map((c) => [`${c.role} ${c.op} ${c.variant} → ${c.expected}`, c] as const))('%s', async (_name, cell) => {
    if (cell.expected === 'none') {
      // No role holds a permission the caller's role lacks, so there is no higher role to ask for.
      const own = ROLE_PERMISSIONS[cell.role];
      expect(ROLE_NAMES.filter((r) => [...ROLE_PERMISSIONS[r]].some((p) => !own.has(p)))).toEqual([]);
      return;
    }
    const { res, want, after, before } = await run(cell) as Awaited<ReturnType<typeof run>> & { before?: { role: string; scopes: unknown } };
    if (cell.expected === '201' || cell.expected === '200') {
      expect(res.status).toBe(Number(cell.expected));
      expect(after).toMatchObject({ role: want.role, scopes: want.scopes });
      return;
    }
    const [status, what] = cell.expected.split(':') as [string, string];
    expect(res.status).toBe(Number(status));
    if (what === 'forbidden') {
      expect(res.body).toMatchObject({ type: expect.stringMatching(/\/forbidden$/), role: cell.role });
    } else {
      expect(res.body.type).toMatch(/\/beyond-own-rights$/);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(what);
      expect(res.body.mayGrant).toEqual({ roles: grantableRoles(cell.role), scopes: CALLER_SCOPES });
    }
    // Nothing was made or changed.
    if (cell.op === 'createUser' || cell.op === 'createToken') expect(after).toBeUndefined();
    else expect(after).toMatchObject({ role: before?.role, scopes: before?.scopes });
  });

  it('a scoped administrator cannot widen with an id outside its scopes or through machine groups; omitted scopes are its own', async () => {
    const admin = callers.get('admin') as Session;
    const as = { cookie: admin.cookie, headers: admin.headers };
    const foreign = await svc.request('POST', '/api/v1/admin/service-tokens', { ...as, body: { name: 'foreign lib', role: 'auditor', scopes: { libraries: [LIB_A, LIB_C], machineGroups: [GRP_1] } } });
    expect(foreign.status).toBe(403);
    expect(foreign.body.errors).toEqual([expect.objectContaining({ field: 'body.scopes.libraries', message: expect.stringContaining(LIB_C) })]);
    expect(foreign.body.errors[0].accepted).toContain(LIB_A);
    const groups = await svc.request('POST', '/api/v1/admin/users', { ...as, body: { username: 'all.groups', password: 'all-groups-password', role: 'operator', scopes: { libraries: [LIB_A], machineGroups: '*' } } });
    expect(groups.status).toBe(403);
    expect(groups.body.errors.map((e: { field: string }) => e.field)).toEqual(['body.scopes.machineGroups']);
    const otherGroup = await svc.request('POST', '/api/v1/admin/users', { ...as, body: { username: 'other.group', password: 'other-group-password', role: 'operator', scopes: { libraries: [LIB_A], machineGroups: [GRP_2] } } });
    expect(otherGroup.status).toBe(403);
    const omitted = await svc.request('POST', '/api/v1/admin/service-tokens', { ...as, body: { name: 'defaults', role: 'integration' } });
    expect(omitted.status).toBe(201);
    expect(omitted.body.scopes).toEqual(CALLER_SCOPES);
    const groupsOmitted = await svc.request('POST', '/api/v1/admin/users', { ...as, body: { username: 'groups.omitted', password: 'groups-omitted-pw', role: 'operator', scopes: { libraries: [LIB_B] } } });
    expect(groupsOmitted.status).toBe(201);
    expect(groupsOmitted.body.scopes).toEqual({ libraries: [LIB_B], machineGroups: [GRP_1] });
    // The token it made reads only what its maker may.
    const me = await svc.request('GET', '/api/v1/auth/me', { token: omitted.body.token });
    expect(me.body.scopes).toEqual(CALLER_SCOPES);
  });

  it('accounts holding more than the caller are left out of its lists and are 404 to change or revoke', async () => {
    const admin = callers.get('admin') as Session;
    const as = { cookie: admin.cookie, headers: admin.headers };
    const rootUser = (await users()).find((u) => u.username === 'admin') as { id: string };
    const wide = await svc.request('POST', '/api/v1/admin/service-tokens', { cookie: root.cookie, headers: root.headers, body: { name: 'wide token', role: 'auditor' } });
    const listedUsers = (await svc.request('GET', '/api/v1/admin/users?limit=1000', { cookie: admin.cookie })).body.items.map((u: { username: string }) => u.username);
    expect(listedUsers).toContain('scoped.admin');
    expect(listedUsers).not.toContain('admin');
    const listedTokens = await svc.request('GET', '/api/v1/admin/service-tokens?limit=1000', { cookie: admin.cookie });
    expect(listedTokens.body.items.map((t: { name: string }) => t.name)).not.toContain('wide token');
    expect(listedTokens.text).not.toContain('"*"');
    const disableRoot = await svc.request('PATCH', `/api/v1/admin/users/${rootUser.id}`, { ...as, body: { disabled: true } });
    expect(disableRoot.status).toBe(404);
    const missing = await svc.request('PATCH', '/api/v1/admin/users/usr_0000000000000000', { ...as, body: { disabled: true } });
    expect(disableRoot.body.detail.replace(rootUser.id, 'X')).toBe(missing.body.detail.replace('usr_0000000000000000', 'X'));
    const revoke = await svc.request('DELETE', `/api/v1/admin/service-tokens/${wide.body.id}`, as);
    expect(revoke.status).toBe(404);
    expect((await svc.request('GET', '/api/v1/auth/me', { token: wide.body.token })).status).toBe(200);
    expect((await svc.request('GET', '/api/v1/auth/me', { cookie: root.cookie })).status).toBe(200);
    // Paging over a filtered list still walks every visible account once.
    const seen: string[] = [];
    for (let cursor: string | null = null, i = 0; i < 100; i++) {
      const page: { body: { items: { id: string }[]; nextCursor: string | null } } = await svc.request('GET', `/api/v1/admin/users?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { cookie: admin.cookie });
      seen.push(...page.body.items.map((u) => u.id));
      cursor = page.body.nextCursor;
      if (!cursor) break;
    }
    expect(seen.length).toBe(listedUsers.length);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('a token that requires an operator, or expires, makes no token without that limit; omitted, the new token inherits it', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const bot = await svc.request('POST', '/api/v1/admin/service-tokens', { cookie: root.cookie, headers: root.headers, body: { name: 'admin bot', role: 'admin', scopes: CALLER_SCOPES, requiresOperator: true, expiresAt } });
    const token = bot.body.token as string;
    const free = await svc.request('POST', '/api/v1/admin/service-tokens', { token, body: { name: 'no operator', role: 'auditor', requiresOperator: false } });
    expect(free.status).toBe(403);
    expect(free.body.errors.map((e: { field: string }) => e.field)).toEqual(['body.requiresOperator']);
    expect(free.body.mayGrant).toEqual({ roles: grantableRoles('admin'), scopes: CALLER_SCOPES, tokenLimits: { requiresOperator: true, expiresNoLaterThan: new Date(Date.parse(expiresAt)).toISOString() } });
    const later = await svc.request('POST', '/api/v1/admin/service-tokens', { token, body: { name: 'lives longer', role: 'auditor', expiresAt: new Date(Date.parse(expiresAt) + 60_000).toISOString() } });
    expect(later.status).toBe(403);
    expect(later.body.errors.map((e: { field: string }) => e.field)).toEqual(['body.expiresAt']);
    const inherited = await svc.request('POST', '/api/v1/admin/service-tokens', { token, body: { name: 'inherits', role: 'auditor' } });
    expect(inherited.status).toBe(201);
    expect(inherited.body).toMatchObject({ requiresOperator: true, expiresAt: new Date(Date.parse(expiresAt)).toISOString(), scopes: CALLER_SCOPES });
  });
});

describe('the role order', () => {
  it('a role may grant exactly the roles whose every permission it holds', () => {
    const expected: Record<RoleName, RoleName[]> = {
      admin: ['admin', 'programmer', 'approver', 'operator', 'auditor', 'integration'],
      programmer: ['programmer', 'operator', 'integration'],
      approver: ['approver'],
      operator: ['operator'],
      auditor: ['auditor'],
      integration: ['programmer', 'operator', 'integration'],
    };
    for (const role of ROLE_NAMES) expect(grantableRoles(role), role).toEqual(expected[role]);
    expect(grantableRoles('system')).toEqual([]);
  });
});
