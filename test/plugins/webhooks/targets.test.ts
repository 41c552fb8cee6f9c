/**
 * Where webhooks may deliver: http(s) only; by default public addresses
 * only, a literal address judged at registration and every host name judged
 * by what it resolves to at each delivery; with
 * programs.webhooks.allowPrivateNetworks, private and loopback receivers too,
 * link-local (cloud metadata) never.
 */
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { vaultPlugin } from '../../../plugins/vault/index.js';
import { createWebhooksPlugin } from '../../../plugins/webhooks/index.js';
import { addressRefusal } from '../../../plugins/webhooks/targets.js';
import { startTestProgramService, type TestProgramService } from '../../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD, type Session } from '../../fixtures/programs-accounts.js';
import { untilDefined } from '../../fixtures/until.js';

/** A program service with webhooks (retries every 100 ms) and an administrator's session. */
async function service(allowPrivateNetworks: boolean): Promise<{ svc: TestProgramService; admin: Session }> {
  const svc = await startTestProgramService({
    plugins: [TEST_ACCOUNTS, vaultPlugin, createWebhooksPlugin({ retryDelaysMs: [100, 100] })], env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD },
    programs: { webhooks: { allowPrivateNetworks } },
  });
  return { svc, admin: await login(svc, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD) };
}

describe('webhook targets', () => {
  let plain: { svc: TestProgramService; admin: Session };
  let plant: { svc: TestProgramService; admin: Session };
  const got: string[] = [];
  const receiver = createServer((req, res) => {
    got.push(req.url ?? '');
    req.resume().on('end', () => res.writeHead(204).end());
  });
  let port: number;

  beforeAll(async () => {
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    port = (receiver.address() as { port: number }).port;
    plain = await service(false);
    plant = await service(true);
  });
  afterAll(async () => {
    await plain?.svc.stop();
    await plant?.svc.stop();
    await new Promise((resolve) => receiver.close(resolve));
  });

  /** Registers `url`; for version.published unless told (an address nothing listens on gets an event that never fires here). */
  const register = (s: { svc: TestProgramService; admin: Session }, url: string, events = ['version.published']) =>
    s.svc.request('POST', '/api/v1/admin/webhooks', { cookie: s.admin.cookie, headers: s.admin.headers, body: { url, events } });
  const post = (s: { svc: TestProgramService; admin: Session }, path: string, body?: unknown) =>
    s.svc.request('POST', path, { cookie: s.admin.cookie, headers: s.admin.headers, ...(body !== undefined ? { body } : {}) });
  /** Publishes a version, which raises version.published. */
  const publish = async (s: { svc: TestProgramService; admin: Session }, name: string) => {
    const lib = await post(s, '/api/v1/libraries', { name, approvalPolicy: { mode: 'autoRelease' } });
    const prg = (await post(s, '/api/v1/programs', { libraryId: lib.body.id, name, controller: 'fanuc' })).body.id;
    const version = (await post(s, `/api/v1/programs/${prg}/versions`, { contentBase64: Buffer.from('%\nO1\nM30\n%\n').toString('base64'), notes: '' })).body.id;
    expect((await post(s, `/api/v1/versions/${version}/submit`)).status).toBe(200);
  };
  const deliveries = async (s: { svc: TestProgramService; admin: Session }, webhookId: string) =>
    (await s.svc.request('GET', `/api/v1/admin/webhooks/deliveries?webhookId=${webhookId}`, { cookie: s.admin.cookie })).body.items as { status: string; attempts: number; lastError: string | null }[];

  it('PV-60 a literal loopback, link-local, private, unique-local or unspecified address is refused at registration, naming body.url', async () => {
    const refused: Record<string, RegExp> = {
      'http://127.0.0.1/': /loopback/, 'http://169.254.169.254/latest/meta-data/': /link-local/, 'http://10.1.2.3/': /private/, 'https://192.168.0.10:8443/hooks': /private/,
      'http://[::1]/': /loopback/, 'http://[fc00::1]/': /unique-local/, 'http://[::ffff:127.0.0.1]/': /loopback/, 'http://0x7f.1/': /loopback/, 'http://2130706433/': /loopback/,
      'http://0.0.0.0/': /unspecified/, 'http://[::]/': /unspecified/, 'http://224.0.0.1/': /multicast/, 'http://100.64.0.1/': /carrier-grade NAT/, 'http://[64:ff9b::a01:203]/': /private/,
    };
    for (const [url, why] of Object.entries(refused)) {
      const res = await register(plain, url);
      expect(res.status, url).toBe(422);
      expect(res.body.errors, url).toEqual([expect.objectContaining({ field: 'body.url', message: expect.stringMatching(why) })]);
    }
    expect((await plain.svc.request('GET', '/api/v1/admin/webhooks', { cookie: plain.admin.cookie })).body.items).toEqual([]);
  });

  it('PV-60 a scheme other than http or https is refused at registration, naming body.url', async () => {
    for (const url of ['ftp://files.example.com/hooks', 'file:///etc/passwd', 'gopher://example.com/', 'javascript:alert(1)', 'http://']) {
      const res = await register(plain, url);
      expect(res.status, url).toBe(400);
      expect(res.body.errors[0], url).toMatchObject({ field: 'body.url', message: expect.stringContaining('http:// or https://') });
    }
  });

  it('PV-60 a host name that resolves to loopback is refused at each delivery, and the delivery history says why', async () => {
    const created = await register(plain, `http://localhost:${port}/plain`);
    expect(created.status).toBe(201);
    await publish(plain, 'REBOUND');
    const failed = await untilDefined('the delivery given up', async () => (await deliveries(plain, created.body.id)).find((d) => d.status === 'failed'));
    expect(failed.attempts).toBe(3);
    expect(failed.lastError).toMatch(/^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address; webhooks deliver to public addresses unless programs\.webhooks\.allowPrivateNetworks/);
    expect(got.filter((u) => u === '/plain')).toEqual([]);
  });

  it('PV-60 with programs.webhooks.allowPrivateNetworks a private or loopback receiver is reached; link-local stays refused', async () => {
    expect((await register(plant, 'http://10.1.2.3/', ['drift.opened'])).status).toBe(201);
    expect((await register(plant, 'http://[fd12::1]/', ['drift.opened'])).status).toBe(201);
    const metadata = await register(plant, 'http://169.254.169.254/');
    expect(metadata.status).toBe(422);
    expect(metadata.body.errors[0].message).toMatch(/link-local address, never a webhook target/);
    const byName = await register(plant, `http://localhost:${port}/plant`);
    const byAddress = await register(plant, `http://127.0.0.1:${port}/plant-literal`);
    await publish(plant, 'INSIDE');
    for (const hook of [byName, byAddress]) {
      const delivered = await untilDefined('the delivery', async () => (await deliveries(plant, hook.body.id)).find((d) => d.status === 'delivered'));
      expect(delivered.lastError).toBeNull();
    }
    expect(got).toEqual(expect.arrayContaining(['/plant', '/plant-literal']));
  });

  it('the address rules: public addresses always, NAT64 judged by the IPv4 address it carries', () => {
    expect(addressRefusal('93.184.216.34', false)).toBeUndefined();
    expect(addressRefusal('2606:4700::1111', false)).toBeUndefined();
    expect(addressRefusal('64:ff9b::5db8:d822', false)).toBeUndefined();
    expect(addressRefusal('192.0.2.1', true)).toMatch(/reserved address, never/);
    expect(addressRefusal('::ffff:10.0.0.1', true)).toBeUndefined();
    expect(addressRefusal('fe80::1', true)).toMatch(/link-local/);
  });

  it('PV-60 the IPv4-compatible (::/96) and IPv4-translated (::ffff:0:0:0/96) ranges are refused, whatever IPv4 address they carry and whether private networks are allowed', async () => {
    for (const allowPrivate of [false, true]) {
      for (const address of ['::7f00:1', '::127.0.0.1', '::a00:1', '::5db8:d822', '::93.184.216.34']) expect(addressRefusal(address, allowPrivate), address).toMatch(/IPv4-compatible .*never a webhook target/);
      for (const address of ['::ffff:0:7f00:1', '::ffff:0:5db8:d822']) expect(addressRefusal(address, allowPrivate), address).toMatch(/IPv4-translated .*never a webhook target/);
    }
    for (const url of ['http://[::127.0.0.1]/', 'http://[::7f00:1]/', 'http://[::93.184.216.34]/', 'http://[::ffff:0:127.0.0.1]/']) {
      const res = await register(plain, url);
      expect(res.status, url).toBe(422);
      expect(res.body.errors, url).toEqual([expect.objectContaining({ field: 'body.url', message: expect.stringMatching(/IPv4-(compatible|translated)/) })]);
    }
  });
});
