/**
 * `cloud.dynamicSecurity` mistakes are named at start: the section means
 * something only beside `cloud.brokerUrl`, and the admin client needs its
 * user name and its password (CLOUD_DYNSEC_PASSWORD).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { brokerTlsOf, gatewayUsersOptions } from '../../core/roles/cloud/gateway-users.js';
import { startTestCloud } from '../fixtures/cloud.js';

describe('cloud.dynamicSecurity', () => {
  it('without cloud.brokerUrl the cloud does not start, and says why', async () => {
    await expect(startTestCloud({ dynamicSecurity: { username: 'cloud-admin', password: 'pw' } })).rejects.toThrow(/cloud\.dynamicSecurity: only meaningful with cloud\.brokerUrl/);
  });

  it('names the missing user name and password, and reads the user name from CLOUD_DYNSEC_USERNAME', () => {
    const section = { brokerUrl: 'mqtt://broker.plant:1883', dynamicSecurity: {} };
    expect(() => gatewayUsersOptions(section, {}, 'cncgw/v1')).toThrow(/cloud\.dynamicSecurity\.username.*CLOUD_DYNSEC_USERNAME/);
    expect(() => gatewayUsersOptions(section, { CLOUD_DYNSEC_USERNAME: 'cloud-admin' }, 'cncgw/v1')).toThrow(/CLOUD_DYNSEC_PASSWORD/);
    const options = gatewayUsersOptions(section, { CLOUD_DYNSEC_USERNAME: 'cloud-admin', CLOUD_DYNSEC_PASSWORD: 'secret-pw' }, 'cncgw/v1');
    expect(options).toEqual({ url: 'mqtt://broker.plant:1883', username: 'cloud-admin', password: 'secret-pw', topicPrefix: 'cncgw/v1' });
    expect(gatewayUsersOptions({ brokerUrl: 'mqtt://broker.plant:1883' }, { CLOUD_DYNSEC_PASSWORD: 'x' }, 'cncgw/v1')).toBeUndefined();
  });

  it('the admin client takes cloud.brokerTls as the relay does; a certificate without its key, or an unreadable file, is named', () => {
    const dir = mkdtempSync(join(tmpdir(), 'broker-tls-'));
    const pem = join(dir, 'ca.pem');
    writeFileSync(pem, '-----BEGIN CERTIFICATE-----\n');
    const env = { CLOUD_DYNSEC_USERNAME: 'cloud-admin', CLOUD_DYNSEC_PASSWORD: 'pw' };
    const section = { brokerUrl: 'mqtts://broker.plant:8883', dynamicSecurity: {} };
    expect(gatewayUsersOptions({ ...section, brokerTls: { caFile: pem, certFile: pem, keyFile: pem } }, env, 'cncgw/v1')?.connect).toEqual({ ca: readFileSync(pem), cert: readFileSync(pem), key: readFileSync(pem) });
    expect(() => brokerTlsOf({ brokerTls: { certFile: pem } })).toThrow(/cloud\.brokerTls\.keyFile: needed with cloud\.brokerTls\.certFile/);
    expect(() => brokerTlsOf({ brokerTls: { caFile: join(dir, 'missing.pem') } })).toThrow(/cloud\.brokerTls\.caFile: cannot read/);
  });
});
