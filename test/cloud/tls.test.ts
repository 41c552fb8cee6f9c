/**
 * The cloud relay over TLS: the embedded broker serves mqtts with a
 * certificate, a gateway that trusts it (cloudLink.caFile) is served, one
 * that does not is refused and says why in gateway-info, and a caFile that
 * cannot be read stops the gateway at start naming the field.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudRole } from '../../core/roles/cloud/role.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { connectMcp, type McpSession } from '../fixtures/mcp-client.js';
import { selfSignedCertificate } from '../fixtures/self-signed.js';
import { startTestCloud, untilOnline } from '../fixtures/cloud.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('cloud relay over TLS', { timeout: 60_000 }, () => {
  let dir: string;
  let certFile: string;
  let cloud: CloudRole;
  let url: string;
  const gateways: TestGateway[] = [];
  const sessions: McpSession[] = [];

  beforeAll(async () => {
    const tls = selfSignedCertificate();
    ({ dir, certFile } = tls);
    cloud = await startTestCloud({ embeddedBroker: { host: '127.0.0.1', port: 0, tls: { cert: tls.cert, key: tls.key } } });
    url = await cloud.listen('127.0.0.1', 0);
  });
  afterAll(async () => {
    for (const s of sessions) await s.close().catch(() => undefined);
    for (const gw of gateways) await gw.stop().catch(() => undefined);
    await cloud?.stop();
  });

  it('GW-85 a gateway that trusts the broker\'s certificate is served over mqtts; one that does not is refused and says why', async () => {
    expect(cloud.brokerUrl).toMatch(/^mqtts:\/\/127\.0\.0\.1:\d+$/);
    const trusted = await cloud.tokens.create('plant-tls');
    const gw = await startTestGateway({ machines: [simMachine('T1')], cloudLink: { brokerUrl: cloud.brokerUrl, accessToken: trusted.token, caFile: certFile } });
    gateways.push(gw);
    await untilOnline(cloud, trusted.record.id);
    const s = await connectMcp(`${url}/mcp`, undefined, { accesstoken: trusted.token });
    sessions.push(s);
    expect((await s.call('list_machines')).json()).toMatchObject({ count: 1, machines: [expect.objectContaining({ machineID: 'T1' })] });

    const other = await cloud.tokens.create('plant-untrusting');
    const refused = await startTestGateway({ machines: [simMachine('U1')], cloudLink: { brokerUrl: cloud.brokerUrl, accessToken: other.token } });
    gateways.push(refused);
    let cloudInfo: Record<string, unknown> = {};
    for (let i = 0; i < 200 && cloudInfo.lastError === undefined; i++) {
      await sleep(25);
      cloudInfo = ((await refused.request('GET', '/api/system/gateway-info')).body.data as { cloud: Record<string, unknown> }).cloud;
    }
    expect(cloudInfo).toMatchObject({ configured: true, connected: false, lastError: expect.stringMatching(/self.signed|certificate/i) });
    expect(cloud.relay.isOnline(other.record.id)).toBe(false);
  });

  it('GW-85 a cloudLink.caFile that cannot be read stops the gateway at start, naming the field and the path', async () => {
    const { token } = await cloud.tokens.create('plant-missing-ca');
    await expect(startTestGateway({ cloudLink: { brokerUrl: cloud.brokerUrl, accessToken: token, caFile: join(dir, 'no-such-ca.pem') } }))
      .rejects.toThrow(/cloudLink\.caFile: cannot read '.*no-such-ca\.pem' \(ENOENT\)/);
  });
});
