/**
 * The auth matrix, generated from the interface registry: every interface ×
 * every credential case × every white-list case. A new interface is covered
 * the moment it is defined. Each cell's expectation comes from the
 * specification's rules (section 5), written out in `expected()` below.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import type { InterfaceDefinition } from '../../../core/interfaces/registry.js';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { jwtIssuedAgo, jwtWithForeignKey, unsignedJwt } from '../../fixtures/credentials.js';

const CREDENTIALS = [
  'no credentials',
  'malformed header',
  'expired JWT',
  'JWT signed with another key',
  'JWT with alg none',
  'JWT of a deleted user',
  'unknown secret key',
  'revoked secret key',
  'non-admin not authorised',
  'non-admin authorised',
  'admin',
  'security control off',
] as const;
type Credential = (typeof CREDENTIALS)[number];

const SOURCES = ['source IP in list', 'source IP not in list', 'white list off'] as const;
type Source = (typeof SOURCES)[number];

const RULES: Record<Credential, string> = {
  'no credentials': 'GW-70 GW-78',
  'malformed header': 'GW-72 GW-78',
  'expired JWT': 'GW-23 GW-78',
  'JWT signed with another key': 'GW-73 GW-78',
  'JWT with alg none': 'GW-73 GW-78',
  'JWT of a deleted user': 'GW-73 GW-78',
  'unknown secret key': 'GW-73 GW-78',
  'revoked secret key': 'GW-73 GW-78',
  'non-admin not authorised': 'GW-76',
  'non-admin authorised': 'GW-74 GW-76',
  admin: 'GW-75',
  'security control off': 'GW-71 GW-79',
};

const EXEMPT = new Set(['/api/auth/login', '/api/misc/product-details']);
const adminOnly = (path: string) => path.startsWith('/api/security/');

type Outcome = { status: number; errorCode: number } | 'allowed';

/** What the specification (and our documented reading of it, docs/security.md) says each cell answers. */
function expected(def: InterfaceDefinition, credential: Credential, source: Source): Outcome {
  const validJwt = credential === 'admin';
  if (source === 'source IP not in list' && !EXEMPT.has(def.path) && !validJwt) return { status: 401, errorCode: 7 };
  const isPublic = def.permission === null;
  const changePassword = def.path === '/api/auth/change-password';
  if (credential === 'security control off') return changePassword ? { status: 401, errorCode: 3 } : 'allowed';
  if (isPublic) return 'allowed';
  if (credential === 'no credentials' || credential === 'malformed header') return { status: 401, errorCode: 3 };
  if (credential === 'non-admin not authorised' || credential === 'non-admin authorised') {
    if (adminOnly(def.path)) return { status: 403, errorCode: 5 };
    // change-password is self-service but takes the user from a JWT; the non-admins here use secret keys.
    if (changePassword) return { status: 401, errorCode: 3 };
    return credential === 'non-admin authorised' ? 'allowed' : { status: 403, errorCode: 5 };
  }
  if (credential === 'admin') return 'allowed';
  return { status: 401, errorCode: 4 };
}

let gw: TestGateway;
const tokens = {} as Record<Credential, string | null>;
let headersFor: (c: Credential) => Record<string, string>;

beforeAll(async () => {
  gw = await startTestGateway({ machines: [simMachine('M1')] });
  const paths = gw.gateway.context.interfaces.list().filter((d) => d.permission !== null && !adminOnly(d.path)).map((d) => d.permission ?? d.path);
  const add = async (username: string, authorizedApis: string[]) => {
    const res = await gw.request('POST', '/api/security/user/add', { username, password: `${username}-password-1`, authorizedApis });
    expect(res.status).toBe(200);
  };
  const key = async (username: string) => (await gw.request('POST', '/api/security/secret-key/create', { username })).body.data as { id: string; key: string };
  await add('viewer', []);
  await add('operator', paths);
  await add('ghost', ['/api/config/machines']);
  const ghostLogin = await gw.request('POST', '/api/auth/login', { username: 'ghost', password: 'ghost-password-1' }, { token: null });
  tokens['JWT of a deleted user'] = (ghostLogin.body.data as { token: string }).token;
  await gw.request('POST', '/api/security/user/delete', { username: 'ghost' });
  const revoked = await key('viewer');
  await gw.request('POST', '/api/security/secret-key/revoke', { id: revoked.id });
  tokens['no credentials'] = null;
  tokens['malformed header'] = null;
  tokens['expired JWT'] = await jwtIssuedAgo(gw.dataDir, gw.adminToken, 25 * 3600_000);
  tokens['JWT signed with another key'] = await jwtWithForeignKey('admin');
  tokens['JWT with alg none'] = unsignedJwt('admin');
  tokens['unknown secret key'] = `gwk_${randomBytes(6).toString('hex')}_${randomBytes(32).toString('base64url')}`;
  tokens['revoked secret key'] = revoked.key;
  tokens['non-admin not authorised'] = (await key('viewer')).key;
  tokens['non-admin authorised'] = (await key('operator')).key;
  tokens.admin = gw.adminToken;
  tokens['security control off'] = null;
  headersFor = (c) => {
    if (c === 'malformed header') return { authorization: 'Basic YWRtaW46YWRtaW4=' };
    const t = tokens[c];
    const headers: Record<string, string> = {};
    if (t) headers.authorization = `Bearer ${t}`;
    return headers;
  };
});

afterAll(async () => {
  await gw?.stop();
});

async function configure(source: Source, securityOff: boolean): Promise<void> {
  const res = await gw.request('POST', '/api/security/settings/update', {
    securityControl: !securityOff,
    enableIpWhiteList: source !== 'white list off',
    ipWhiteList: ['127.0.0.1/32', '::1'],
  });
  expect(res.status).toBe(200);
}

describe('auth matrix: every interface × credentials × source IP', () => {
  it('covers every registered interface', () => {
    const paths = gw.gateway.context.interfaces.list().map((d) => d.path);
    expect(paths).toContain('/api/auth/login');
    expect(paths).toContain('/api/config/machines');
    expect(paths.length).toBeGreaterThanOrEqual(20);
  });

  for (const source of SOURCES) {
    for (const credential of CREDENTIALS) {
      const ids = `${RULES[credential]}${source === 'source IP not in list' ? ' GW-81 GW-82 GW-83' : source === 'source IP in list' ? ' GW-80' : ''}`;
      it(`${ids} ${credential}, ${source}`, async () => {
        await configure(source, credential === 'security control off');
        const remoteAddress = source === 'source IP not in list' ? '127.0.0.2' : '127.0.0.1';
        const failures: string[] = [];
        for (const def of gw.gateway.context.interfaces.list()) {
          const res = await gw.gateway.http.inject({
            method: def.method,
            url: def.path,
            remoteAddress,
            headers: headersFor(credential),
            ...(def.method === 'POST' ? { payload: {} } : {}),
          });
          const body = res.json() as { errorCode: number };
          const want = expected(def, credential, source);
          const ok =
            want === 'allowed'
              ? res.statusCode !== 401 && res.statusCode !== 403 && res.statusCode < 500 && ![3, 4, 5, 7].includes(body.errorCode)
              : res.statusCode === want.status && body.errorCode === want.errorCode;
          if (!ok) failures.push(`${def.method} ${def.path}: got ${res.statusCode}/${body.errorCode}, want ${JSON.stringify(want)}`);
        }
        expect(failures).toEqual([]);
        if (credential === 'security control off') await configure('white list off', false);
      });
    }
  }
});
