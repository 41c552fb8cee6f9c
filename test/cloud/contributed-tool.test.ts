/**
 * A tool a gateway plugin declares answers through the cloud relay too: the
 * cloud's catalogue is made of every tool the gateway's plugins declare
 * (`cloudCatalogue`, as the cloud's definition builds it), so an MCP client
 * of the cloud lists the contributed tool beside the built-in ones and its
 * call runs on the gateway the accessToken selects.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloudCatalogue } from '../../core/roles/cloud/definition.js';
import type { CloudRole } from '../../core/roles/cloud/role.js';
import { ROLES } from '../../core/roles/index.js';
import type { RoleDefinition } from '../../core/runtime/role.js';
import { startTestCloud, untilOnline } from '../fixtures/cloud.js';
import { fleetMixPlugin } from '../fixtures/contributed-tool.js';
import { simMachine, startTestGateway, TEST_PLUGINS, type TestGateway } from '../fixtures/gateway.js';
import { connectMcp, type McpSession } from '../fixtures/mcp-client.js';

describe('a contributed tool through the cloud relay', { timeout: 60_000 }, () => {
  let cloud: CloudRole;
  let gateway: TestGateway;
  let session: McpSession;

  beforeAll(async () => {
    const plugins = [fleetMixPlugin, ...TEST_PLUGINS];
    // This build's roles, with a gateway built with the contributing plugin.
    const definitions: RoleDefinition[] = ROLES.map((r) => (r.name === 'gateway' ? { ...r, plugins } : r));
    cloud = await startTestCloud({ catalogue: cloudCatalogue(definitions) });
    const url = await cloud.listen('127.0.0.1', 0);
    const { token } = await cloud.tokens.create('plant-a');
    gateway = await startTestGateway(
      {
        gateway: { name: 'plant-a' },
        machines: [simMachine('M1'), simMachine('L1', { machineType: 'lathe', driverOptions: { seed: 3, machineType: 'lathe', system: 'FANUC' } })],
        cloudLink: { brokerUrl: cloud.brokerUrl, accessToken: token },
      },
      undefined,
      { plugins },
    );
    await untilOnline(cloud, token);
    session = await connectMcp(url, undefined, { accesstoken: token });
  });

  afterAll(async () => {
    await session?.close();
    await gateway?.stop();
    await cloud?.stop();
  });

  it('GW-85 the cloud lists the tool a gateway plugin declares, as the gateway itself does', async () => {
    const { tools } = await session.client.listTools();
    expect(tools.map((t) => t.name)).toContain('count_machines_by_type');
    const own = await connectMcp(await gateway.gateway.listen({ host: '127.0.0.1', port: 0 }), gateway.adminToken);
    try {
      expect(tools).toEqual((await own.client.listTools()).tools);
    } finally {
      await own.close();
    }
  });

  it('GW-85 a call of the contributed tool through the cloud runs on the gateway and answers its result', async () => {
    const all = await session.call('count_machines_by_type');
    expect(all.text).not.toMatch(/Unknown tool/);
    expect(all.isError).toBe(false);
    expect(all.json()).toEqual({ counts: { mill: 1, lathe: 1 } });
    const bad = await session.call('count_machines_by_type', { activeOnly: 'yes' });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain('activeOnly');
  });
});
