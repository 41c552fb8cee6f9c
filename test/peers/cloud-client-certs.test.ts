/**
 * Client certificates to the broker: a Mosquitto whose mqtts listener
 * requires one (`require_certificate true`, signed by the plant's CA), with
 * the dynamic security plugin for the token passwords. The cloud reaches it
 * with `cloud.brokerTls` (its relay client and its dynamic security admin
 * client alike); a gateway with `cloudLink.certFile`/`keyFile`/`caFile` is
 * accepted and answers through the cloud, one without a certificate is
 * refused by the broker and says so in its status.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TOPIC_PREFIX } from '../../core/cloud-wire/protocol.js';
import { MosquittoDynamicSecurity } from '../../core/mqtt/dynamic-security.js';
import type { CloudLinkStatus } from '../../core/roles/gateway/cloud-link-status.js';
import type { CloudRole } from '../../core/roles/cloud/role.js';
import { startTestCloud, untilOnline } from '../fixtures/cloud.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';
import { connectMcp } from '../fixtures/mcp-client.js';
import { startMosquitto, type MosquittoController } from './mosquitto.js';

const prefix = DEFAULT_TOPIC_PREFIX;
const ADMIN = { adminUsername: 'cloud-admin', adminPassword: 'cloud-admin-password' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A CA and certificates it signed (EC P-256, one day), made with the openssl CLI. */
function plantPki(dir: string) {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-days', '1', '-keyout', 'ca.key', '-out', 'ca.pem', '-subj', '/CN=plant-ca');
  const signed = (name: string, extra: string[] = []) => {
    openssl('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`, ...extra);
    openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '1', '-out', `${name}.pem`, '-copy_extensions', 'copy');
    return { certFile: join(dir, `${name}.pem`), keyFile: join(dir, `${name}.key`) };
  };
  return { caFile: join(dir, 'ca.pem'), server: signed('broker', ['-addext', 'subjectAltName=IP:127.0.0.1']), cloud: signed('cloud-1'), gateway: signed('gateway-1') };
}

describe('client certificates to a Mosquitto that requires them', { timeout: 90_000 }, () => {
  let broker: MosquittoController;
  let cloud: CloudRole;
  let url: string;
  let adminKey: string;
  let brokerUrl: string;
  let pki: ReturnType<typeof plantPki>;
  const gateways: TestGateway[] = [];

  const newToken = async (name: string): Promise<string> => {
    const res = await fetch(new URL('/admin/gateway-tokens', url), { method: 'POST', headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
    expect(res.status).toBe(201);
    return ((await res.json()) as { token: string }).token;
  };

  beforeAll(async () => {
    pki = plantPki(mkdtempSync(join(tmpdir(), 'plant-pki-')));
    broker = await startMosquitto({
      dynamicSecurity: ADMIN,
      listenerLines: [`cafile ${pki.caFile}`, `certfile ${pki.server.certFile}`, `keyfile ${pki.server.keyFile}`, 'require_certificate true', 'use_username_as_clientid true'],
    });
    brokerUrl = `mqtts://127.0.0.1:${broker.port}`;
    const tls = { ca: readFileSync(pki.caFile), cert: readFileSync(pki.cloud.certFile), key: readFileSync(pki.cloud.keyFile) };
    const setup = await MosquittoDynamicSecurity.connect({ url: brokerUrl, username: ADMIN.adminUsername, password: ADMIN.adminPassword, topicPrefix: prefix, connect: tls });
    const acl = (acltype: string, topic: string) => ({ command: 'addRoleACL', rolename: 'cncgw-cloud', acltype, topic, allow: true });
    const answers = await setup.send([
      { command: 'createRole', rolename: 'cncgw-cloud' },
      acl('subscribePattern', `${prefix}/#`), acl('publishClientReceive', `${prefix}/#`),
      acl('publishClientSend', `${prefix}/gateways/+/requests`), acl('publishClientSend', `${prefix}/gateways/+/presence`),
      { command: 'createClient', username: 'cloud-1', password: 'cloud-1-password', roles: [{ rolename: 'cncgw-cloud' }] },
    ]);
    expect(answers.filter((a) => a.error)).toEqual([]);
    await setup.close();
    cloud = await startTestCloud({
      broker: { url: brokerUrl, username: 'cloud-1', password: 'cloud-1-password', reconnectMaxMs: 2000, tls: { caFile: pki.caFile, ...pki.cloud } },
      dynamicSecurity: { username: ADMIN.adminUsername, password: ADMIN.adminPassword },
    });
    url = await cloud.listen('127.0.0.1', 0);
    adminKey = (await cloud.adminKeys.create('ops')).token;
  }, 60_000);
  afterAll(async () => {
    for (const gw of gateways) await gw.stop().catch(() => undefined);
    await cloud?.stop();
    await broker?.stop();
  });

  it('the cloud reaches the broker with cloud.brokerTls (relay and dynamic security admin), and a gateway with its certificate answers through it', async () => {
    expect(cloud.relay.brokerLink()).toMatchObject({ state: 'connected' });
    // Made through the admin client over mqtts with the cloud's certificate.
    const token = await newToken('plant-tls');
    const gw = await startTestGateway({ machines: [simMachine('T1')], cloudLink: { brokerUrl, accessToken: token, caFile: pki.caFile, ...pki.gateway, reconnectMaxSeconds: 2 } });
    gateways.push(gw);
    await untilOnline(cloud, token);
    const session = await connectMcp(url, undefined, { accesstoken: token });
    try {
      expect((await session.call('list_machines')).json()).toMatchObject({ count: 1, machines: [expect.objectContaining({ machineID: 'T1' })] });
    } finally {
      await session.close();
    }
  });

  it('a gateway without a client certificate is refused by the broker, with its valid token, and its status says why', async () => {
    const token = await newToken('plant-no-cert');
    const gw = await startTestGateway({ machines: [simMachine('N1')], cloudLink: { brokerUrl, accessToken: token, caFile: pki.caFile, reconnectMaxSeconds: 2 } });
    gateways.push(gw);
    const status = async () => ((await gw.request('GET', '/api/system/gateway-info')).body.data as { cloud: CloudLinkStatus }).cloud;
    for (let i = 0; i < 100 && (await status()).lastError === undefined; i++) await sleep(50);
    expect(await status()).toMatchObject({ connected: false, lastError: expect.any(String) });
    expect(cloud.relay.isOnline(token.split('_')[1] as string)).toBe(false);
  });

  it('cloudLink.certFile without keyFile stops the gateway\'s start naming the missing field', async () => {
    await expect(startTestGateway({ cloudLink: { brokerUrl, accessToken: 'cgw_abc_def', certFile: pki.gateway.certFile } })).rejects.toThrow(/cloudLink\.keyFile: needed with cloudLink\.certFile/);
  });
});
