/**
 * `cloud.dynamicSecurity` mistakes are named at start: the section means
 * something only beside `cloud.brokerUrl`, and the admin client needs its
 * user name and its password (CLOUD_DYNSEC_PASSWORD).
 */
import { describe, expect, it } from 'vitest';
import { gatewayUsersOptions } from '../../core/roles/cloud/gateway-users.js';
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
});
