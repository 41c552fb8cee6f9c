import { afterEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { GATEWAY_PLUGINS } from '../../../core/roles/gateway/compose.js';
import { Database } from '../../../core/store/database.js';
import { hashPassword, needsRehash, PASSWORD_COST, verifyPassword } from '../../../core/auth/passwords.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

/** A gateway with the production plugins, so passwords are hashed at the production cost. */
function startProductionCostGateway(dataDir?: string): Promise<TestGateway> {
  return startTestGateway({}, dataDir, { plugins: GATEWAY_PLUGINS });
}

async function loginMs(g: TestGateway, username: string, password: string): Promise<{ ms: number; status: number }> {
  const t = performance.now();
  const res = await g.request('POST', '/api/auth/login', { username, password }, { token: null });
  return { ms: performance.now() - t, status: res.status };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

describe('password hashing cost', () => {
  it('a stored N=16384 hash is re-hashed at the current cost at the next successful login; tokens stay valid', async () => {
    gw = await startTestGateway();
    const add = await gw.request('POST', '/api/security/user/add', { username: 'olduser', password: 'olduser-password-1', authorizedApis: ['/api/config/machines'] });
    expect(add.status).toBe(200);
    const dir = gw.dataDir;
    await gw.stop();
    // The hash an earlier release wrote.
    const db = await Database.open(`${dir}/gateway.db`);
    const legacy = await hashPassword('olduser-password-1', { N: 16384, r: 8, p: 1 });
    await db.write((tx) => tx.run("UPDATE users SET password_hash = ? WHERE username = 'olduser'", [legacy]));
    await db.close();

    gw = await startProductionCostGateway(dir);
    const stored = async () =>
      (await gw!.gateway.context.db.all<{ password_hash: string }>("SELECT password_hash FROM users WHERE username = 'olduser'"))[0]?.password_hash ?? '';
    expect(await stored()).toBe(legacy);
    // A failed login does not re-hash.
    expect((await loginMs(gw, 'olduser', 'wrong-password-1')).status).toBe(401);
    expect(await stored()).toBe(legacy);
    const first = await gw.request('POST', '/api/auth/login', { username: 'olduser', password: 'olduser-password-1' }, { token: null });
    expect(first.status).toBe(200);
    const rehashed = await stored();
    expect(rehashed).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(await verifyPassword('olduser-password-1', rehashed)).toBe(true);
    expect(needsRehash(rehashed)).toBe(false);
    // The re-hash is not a password change: the token from that login still works, and so does the password.
    expect((await gw.request('GET', '/api/config/machines', undefined, { token: first.body.token as string })).status).toBe(200);
    expect((await loginMs(gw, 'olduser', 'olduser-password-1')).status).toBe(200);
    expect(await stored()).toBe(rehashed);
  }, 60_000);

  it('the production cost is scrypt N=2^17, r=8, p=1; hashes are stored at it and an unknown user is verified against a dummy of that cost', async () => {
    expect(PASSWORD_COST).toEqual({ N: 131072, r: 8, p: 1 });
    gw = await startProductionCostGateway();
    const rows = await gw.gateway.context.db.all<{ password_hash: string }>('SELECT password_hash FROM users');
    expect(rows.map((r) => r.password_hash.split('$').slice(0, 4).join('$'))).toEqual(['scrypt$131072$8$1']);
    // Timing is all the outside sees of the dummy hash: an unknown user must take about as long as a known one.
    await loginMs(gw, 'nobody', 'whatever-password-1'); // computes the dummy hash
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 3; i++) {
      known.push((await loginMs(gw, 'admin', `wrong-password-${i}`)).ms);
      unknown.push((await loginMs(gw, `nobody${i}`, 'whatever-password-1')).ms);
    }
    // At N=16384 the dummy took ~7% of a current-cost verification; equal costs give ~100%.
    expect(median(unknown) / median(known)).toBeGreaterThan(0.5);
  }, 60_000);
});
