import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base64url, SignJWT } from 'jose';
import { AccessTokenError, AccessTokenVerifier, MAX_ACCESS_TOKEN_CHARS } from '../../../core/auth/oauth-access-tokens.js';
import { startTestIssuer, type TestIssuer } from '../../fixtures/oidc-issuer.js';

const RESOURCE = 'http://127.0.0.1:9/mcp';
const CLIENT = { id: 'mes', secret: 'a-client-secret-of-enough-length-32' };
let op: TestIssuer;

beforeAll(async () => {
  op = await startTestIssuer({
    accounts: [],
    clients: [{ client_id: CLIENT.id, client_secret: CLIENT.secret, grant_types: ['client_credentials'], response_types: [], redirect_uris: [] }],
    resources: [{ url: RESOURCE, scopes: ['fleet:read'] }, { url: 'http://127.0.0.1:9/other', scopes: ['fleet:read'] }],
  });
});
afterAll(async () => op.close());

const verifier = (o: Partial<ConstructorParameters<typeof AccessTokenVerifier>[0]> = {}) =>
  new AccessTokenVerifier({ issuer: op.issuer, audience: RESOURCE, jwksCooldownMs: 0, ...o });

async function refusal(v: AccessTokenVerifier, token: string) {
  const err = await v.verify(token).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(AccessTokenError);
  expect((err as Error).message).not.toContain(token.slice(0, 20));
  return (err as AccessTokenError).reason;
}

describe('access tokens of an identity provider, checked by a resource server', () => {
  it('accepts a token the provider issued for this resource and answers its claims', async () => {
    const token = await op.clientCredentialsToken(CLIENT, RESOURCE, 'fleet:read');
    const claims = await verifier().verify(token);
    expect(claims).toMatchObject({ iss: op.issuer, aud: RESOURCE, scope: 'fleet:read', client_id: 'mes' });
  });

  it('refuses a token the provider issued for another resource (RFC 8707 audience)', async () => {
    const token = await op.clientCredentialsToken(CLIENT, 'http://127.0.0.1:9/other', 'fleet:read');
    expect(await refusal(verifier(), token)).toBe('audience');
  });

  it('refuses alg none, an HMAC signed with the public key, and an algorithm outside the pinned list', async () => {
    const header = (h: object) => base64url.encode(JSON.stringify(h));
    const body = base64url.encode(JSON.stringify({ iss: op.issuer, aud: RESOURCE, exp: Math.floor(Date.now() / 1000) + 600 }));
    expect(await refusal(verifier(), `${header({ alg: 'none', typ: 'JWT' })}.${body}.`)).toBe('algorithm');
    const publicKeyAsSecret = new TextEncoder().encode(JSON.stringify(op.key.publicJwk));
    const hs = await new SignJWT({ aud: RESOURCE }).setProtectedHeader({ alg: 'HS256', kid: op.key.kid }).setIssuer(op.issuer).setExpirationTime('10m').sign(publicKeyAsSecret);
    expect(await refusal(verifier(), hs)).toBe('algorithm');
    const rs = await op.mint({ aud: RESOURCE });
    expect(await refusal(verifier({ algorithms: ['ES256'] }), rs)).toBe('algorithm');
  });

  it('refuses an expired token, one from another issuer, and one whose key the issuer does not publish', async () => {
    const past = Math.floor(Date.now() / 1000) - 3600;
    expect(await refusal(verifier(), await op.mint({ aud: RESOURCE }, { issuedAtSec: past, expiresInSec: 60 }))).toBe('expired');
    expect(await refusal(verifier(), await op.mint({ aud: RESOURCE, iss: 'http://127.0.0.1:1/another' }))).toBe('issuer');
    expect(await refusal(verifier(), await op.mint({ aud: RESOURCE }, { kid: 'not-published' }))).toBe('unknown-key');
    const forged = (await op.mint({ aud: RESOURCE })).split('.');
    forged[1] = base64url.encode(JSON.stringify({ iss: op.issuer, aud: RESOURCE, exp: Math.floor(Date.now() / 1000) + 600, scope: 'admin' }));
    expect(await refusal(verifier(), forged.join('.'))).toBe('signature');
  });

  it('refuses an oversized or malformed token unread', async () => {
    expect(await refusal(verifier(), 'a'.repeat(MAX_ACCESS_TOKEN_CHARS + 1))).toBe('oversized');
    expect(await refusal(verifier(), 'not a jwt')).toBe('malformed');
  });

  it("follows the provider's key rotation without a restart", async () => {
    const v = verifier();
    expect(await v.verify(await op.mint({ aud: RESOURCE }))).toBeTruthy();
    const old = op.key;
    await op.rotateKeys();
    expect(await v.verify(await op.mint({ aud: RESOURCE }))).toMatchObject({ aud: RESOURCE });
    // The retired key is gone from the JWKS once the verifier has read the new one.
    expect(await refusal(v, await op.mint({ aud: RESOURCE }, { key: old }))).toBe('unknown-key');
  });
});

describe('an identity provider that cannot be used', () => {
  let bad: Server;
  let badIssuer: string;
  beforeAll(async () => {
    bad = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(req.url?.includes('openid-configuration') ? '<html>not json' : 'nope');
    });
    await new Promise<void>((r) => bad.listen(0, '127.0.0.1', r));
    badIssuer = `http://127.0.0.1:${(bad.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => bad.close(() => r())));

  it('says the issuer is unavailable when its discovery document is not JSON', async () => {
    const v = new AccessTokenVerifier({ issuer: badIssuer, audience: RESOURCE });
    const err = await v.verify(await op.mint({ aud: RESOURCE, iss: badIssuer })).catch((e: unknown) => e);
    expect((err as AccessTokenError).reason).toBe('issuer-unavailable');
    expect((err as Error).message).toContain('is not JSON');
  });

  it('says the issuer is unavailable while it is down, and accepts tokens once it is back', async () => {
    const v = verifier();
    op.pause();
    try {
      expect(await refusal(v, await op.mint({ aud: RESOURCE }))).toBe('issuer-unavailable');
    } finally {
      op.resume();
    }
    const fresh = verifier();
    expect(await fresh.verify(await op.mint({ aud: RESOURCE }))).toMatchObject({ aud: RESOURCE });
  });
});
