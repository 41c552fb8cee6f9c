/**
 * `cloudLink.runAs` is the gateway user whose rights cloud calls run with
 * (not the MQTT user name, which is the token's id); the old key
 * `cloudLink.user` is still read as it, with a deprecation line, and a
 * config without a `cloudLink` section still has none.
 */
import { describe, expect, it } from 'vitest';
import { configNotices } from '../../core/config/config.js';
import { parseConfig } from '../../core/roles/index.js';
import { linkSettings } from '../../plugins/cloud-link/settings.js';
import type { CloudLinkConfig } from '../../plugins/cloud-link/config.js';

const link = { brokerUrl: 'mqtt://cloud.plant:1883', accessToken: 'cgw_a_b' };
const cloudLinkOf = (raw: object) => (parseConfig(raw, 'plant.json') as unknown as { cloudLink?: CloudLinkConfig }).cloudLink;

describe('cloudLink.runAs', () => {
  it('is the user cloud calls run as; the built-in administrator unless told', () => {
    expect(linkSettings(cloudLinkOf({ cloudLink: { ...link, runAs: 'cloud-reader' } }), {}, {})?.user).toBe('cloud-reader');
    expect(linkSettings(cloudLinkOf({ cloudLink: link }), {}, {})?.user).toBe('admin');
  });

  it('the old key cloudLink.user is read as runAs, with a deprecation line; both at once is a mistake naming both', () => {
    const old = parseConfig({ cloudLink: { ...link, user: 'cloud-reader' } }, 'plant.json');
    expect(linkSettings((old as unknown as { cloudLink: CloudLinkConfig }).cloudLink, {}, {})?.user).toBe('cloud-reader');
    expect(configNotices(old)).toEqual(['config plant.json: cloudLink.user is the old spelling of cloudLink.runAs, read as it; write cloudLink.runAs instead (the old spelling will stop being read)']);
    expect(() => parseConfig({ cloudLink: { ...link, user: 'a', runAs: 'b' } }, 'plant.json')).toThrow(/cloudLink\.user: cloudLink\.runAs is given too/);
  });

  it('a config without a cloudLink section still has none', () => {
    const config = parseConfig({}, 'plant.json');
    expect([cloudLinkOf({}), configNotices(config)]).toEqual([undefined, []]);
  });
});
