import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { readPart } from '../../../core/config/config-parts.js';
import { parseConfig } from '../../../core/roles/index.js';
import { MTCONNECT_CONFIG } from '../../../plugins/mtconnect-agent/config.js';
import { gatewayBannerSection } from '../../../core/roles/gateway/banner.js';
import { selfSignedCertificate } from '../../fixtures/self-signed.js';
import { startTestGateway } from '../../fixtures/gateway.js';

const stops: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const stop of stops) await stop().catch(() => undefined);
});

describe('the mtconnect section of the configuration', () => {
  it('defaults to on, every address and port 5000; MTCONNECT_PORT overrides the port; a wrong value names its path or variable', () => {
    expect(readPart(parseConfig({}), MTCONNECT_CONFIG)).toEqual({ enabled: true, host: '0.0.0.0', port: 5000 });
    expect(readPart(parseConfig({}, 'x', { MTCONNECT_PORT: '5001' }), MTCONNECT_CONFIG).port).toBe(5001);
    expect(() => parseConfig({}, 'x', { MTCONNECT_PORT: 'five' })).toThrow(/MTCONNECT_PORT/);
    expect(() => parseConfig({ mtconnect: { port: 70000 } })).toThrow(/mtconnect\.port/);
    expect(() => parseConfig({ mtconnect: { color: 'red' } })).toThrow(/mtconnect/);
  });

  it('enabled: false serves no agent', async () => {
    const tg = await startTestGateway({ machines: [], mtconnect: { enabled: false } });
    stops.push(() => tg.stop());
    expect(tg.gateway.context.services.find('mtconnect-agent')).toBeUndefined();
  });

  it('a port in use stops the start, naming the port, MTCONNECT_PORT and mtconnect.port', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      await expect(startTestGateway({ machines: [], mtconnect: { host: '127.0.0.1', port } })).rejects.toThrow(new RegExp(`127\\.0\\.0\\.1:${port}.*in use.*MTCONNECT_PORT.*mtconnect\\.port`));
    } finally {
      taken.close();
    }
  });

  it('serves HTTPS with its own certificate pair, and the banner shows its URL', async () => {
    const pair = selfSignedCertificate();
    const tg = await startTestGateway({ machines: [], mtconnect: { host: '127.0.0.1', port: 0, tls: { certFile: pair.certFile, keyFile: pair.keyFile } } });
    stops.push(() => tg.stop());
    const url = tg.gateway.context.services.get('mtconnect-agent').url;
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const banner = gatewayBannerSection({ version: '1', configFile: 'f', dataDir: 'd', timeZone: 'UTC', machines: [], url: 'http://localhost:8080', announcements: [], mtconnectUrl: url }).join('\n');
    expect(banner).toContain(`MTConnect:   ${url}/probe`);
  });
});
