import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSigningKey, looksLikeJwt, signJwt, verifyJwt } from '../../../core/auth/jwt.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function keyIn(fileName?: string): { dir: string; key: Uint8Array } {
  const dir = mkdtempSync(join(tmpdir(), 'jwt-'));
  dirs.push(dir);
  return { dir, key: loadSigningKey(dir, fileName) };
}

const issue = { issuer: 'program-service', validitySec: 60 };

describe('JWT primitives', () => {
  it('a token verifies with its key and issuer until it expires; the key file is created once with mode 0600', async () => {
    const { dir, key } = keyIn('service.key');
    expect(statSync(join(dir, 'service.key')).mode & 0o777).toBe(0o600);
    expect(loadSigningKey(dir, 'service.key')).toEqual(key);
    const now = 1_700_000_000_000;
    const token = await signJwt(key, 'alice', { role: 'viewer' }, issue, now);
    expect(looksLikeJwt(token)).toBe(true);
    const payload = await verifyJwt(key, token, 'program-service', now + 59_000);
    expect(payload).toMatchObject({ sub: 'alice', role: 'viewer', iss: 'program-service' });
    expect(await verifyJwt(key, token, 'program-service', now + 61_000)).toBeNull();
    expect(await verifyJwt(key, token, 'cnc-machine-gateway', now)).toBeNull();
    expect(await verifyJwt(keyIn().key, token, 'program-service', now)).toBeNull();
  });

  it('a token with alg none or another algorithm is refused: HS256 is pinned', async () => {
    const { key } = keyIn();
    const now = Date.now();
    const token = await signJwt(key, 'alice', {}, issue, now);
    const [, payload, signature] = token.split('.');
    for (const alg of ['none', 'HS512']) {
      const header = Buffer.from(JSON.stringify({ alg, typ: 'JWT' })).toString('base64url');
      expect(await verifyJwt(key, `${header}.${payload}.${alg === 'none' ? '' : signature}`, 'program-service', now)).toBeNull();
    }
  });
});
