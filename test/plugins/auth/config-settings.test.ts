import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestGateway, type TestGateway } from '../../fixtures/gateway.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

const settingsOf = async (g: TestGateway) => (await g.request('GET', '/api/security/settings')).body.data as Record<string, unknown>;

describe('security settings written in the config file', () => {
  it('GW-70 GW-84 a setting the file leaves to its default keeps the stored value; one the file writes replaces it, and the banner says so', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-settings-'));
    gw = await startTestGateway({}, dataDir);
    const update = await gw.request('POST', '/api/security/settings/update', { enableIpWhiteList: true, ipWhiteList: ['127.0.0.1', '10.0.0.0/8'] });
    expect(update.status).toBe(200);
    expect(update.body.data).not.toHaveProperty('warning');
    await gw.stop();

    // The file writes nothing about the white list: the stored one stays, without a word about it.
    gw = await startTestGateway({}, dataDir);
    expect(await settingsOf(gw)).toMatchObject({ enableIpWhiteList: true, ipWhiteList: ['127.0.0.1', '10.0.0.0/8'] });
    expect(gw.gateway.context.announcements.join('\n')).not.toMatch(/security settings applied/);
    await gw.stop();

    // The file writes the list: the file's value is applied and announced with the stored value it replaced.
    gw = await startTestGateway({ communication: { ipWhiteList: ['192.168.1.0/24'] } }, dataDir);
    expect(await settingsOf(gw)).toMatchObject({ enableIpWhiteList: true, ipWhiteList: ['192.168.1.0/24'] });
    const line = gw.gateway.context.announcements.find((l) => l.includes('security settings applied'));
    expect(line).toContain('communication.ipWhiteList ["192.168.1.0/24"] (stored ["127.0.0.1","10.0.0.0/8"])');
    expect(line).not.toContain('enableIpWhiteList');

    // Changing through the API what the file writes warns that the next start brings the file's value back.
    const changed = await gw.request('POST', '/api/security/settings/update', { ipWhiteList: ['127.0.0.1'], enableIpWhiteList: false });
    expect(changed.body.data).toMatchObject({ configManaged: ['communication.ipWhiteList'] });
    expect((changed.body.data as { warning: string }).warning).toMatch(/next start applies the file's value/);
  });

  it('GW-70 securityControl written false in the file turns a stored true off at the next start, and the banner says so', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-settings-'));
    gw = await startTestGateway({}, dataDir);
    expect((await settingsOf(gw)).securityControl).toBe(true);
    await gw.stop();
    gw = await startTestGateway({ security: { securityControl: false } }, dataDir);
    expect((await settingsOf(gw)).securityControl).toBe(false);
    expect(gw.gateway.context.announcements.join('\n')).toContain('security.securityControl false (stored true)');
  });
});
