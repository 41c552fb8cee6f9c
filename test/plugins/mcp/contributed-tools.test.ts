/**
 * A plugin contributes an MCP tool by declaring it (`tools` of definePlugin;
 * the gateway's tool registry, core/mcp/tools.ts) without importing the mcp
 * plugin: a real MCP client lists it beside the 13 built-in tools and calls
 * it, and it runs through the interfaces with the caller's identity like the
 * built-in ones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { GatewayContext } from '../../../core/roles/gateway/context.js';
import { defineTool, McpToolRegistry, ToolRegistryError } from '../../../core/mcp/tools.js';
import { countTool, fleetMixPlugin } from '../../fixtures/contributed-tool.js';
import { definePlugin } from '../../../core/runtime/plugin-host.js';
import { simMachine, startTestGateway, TEST_PLUGINS, type TestGateway } from '../../fixtures/gateway.js';
import { connectMcp, type McpSession } from '../../fixtures/mcp-client.js';

const BUILT_IN = [
  'analyze',
  'get_error_log',
  'get_fleet_status',
  'get_machine',
  'get_system_info',
  'list_groups',
  'list_machines',
  'list_programs',
  'query_history',
  'read_current_program',
  'read_machine',
  'read_task_data',
  'read_tool_life',
];

describe('contributed MCP tools', () => {
  let gw: TestGateway;
  let mcp: McpSession;

  beforeAll(async () => {
    gw = await startTestGateway(
      {
        machines: [
          simMachine('M1'),
          simMachine('L1', { machineType: 'lathe', driverOptions: { seed: 3, machineType: 'lathe', system: 'FANUC' } }),
          simMachine('L2', { machineType: 'lathe', isActive: false, driverOptions: { seed: 4, machineType: 'lathe', system: 'FANUC' } }),
        ],
      },
      undefined,
      { plugins: [fleetMixPlugin, ...TEST_PLUGINS] },
    );
    mcp = await connectMcp(await gw.gateway.listen({ host: '127.0.0.1', port: 0 }), gw.adminToken);
  });

  afterAll(async () => {
    await mcp?.close();
    await gw?.stop();
  });

  it('GW-35 an MCP client lists the contributed tool beside the 13 built-in ones, annotated read-only and idempotent, with its input schema', async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...BUILT_IN, 'count_machines_by_type'].sort());
    const contributed = tools.find((t) => t.name === 'count_machines_by_type');
    expect(contributed?.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true, destructiveHint: false });
    expect(contributed?.inputSchema).toMatchObject({ type: 'object', properties: { activeOnly: { type: 'boolean' } } });
    // Declared by a plugin that boots before the mcp plugin (it does not depend on it): registered first, in boot order.
    expect(gw.gateway.context.tools.names()[0]).toBe('count_machines_by_type');
  });

  it('GW-03 the contributed tool runs through the interfaces: called by the client it answers from /api/config/machines, and its input is validated', async () => {
    const all = await mcp.call('count_machines_by_type');
    expect(all.isError).toBe(false);
    expect(all.json()).toEqual({ counts: { mill: 1, lathe: 2 } });
    const active = await mcp.call('count_machines_by_type', { activeOnly: true });
    expect(active.json()).toEqual({ counts: { mill: 1, lathe: 1 } });
    const bad = await mcp.call('count_machines_by_type', { activeOnly: 'yes' });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain('activeOnly');
  });

  it('the built-in tools still answer beside it, and an unknown tool names the contributed one among those accepted', async () => {
    const machines = await mcp.call('list_machines');
    expect((machines.json().machines as { machineID: string }[]).map((m) => m.machineID)).toEqual(['M1', 'L1', 'L2']);
    const unknown = await mcp.call('no_such_tool');
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toMatch(/^Unknown tool 'no_such_tool'; accepted: .*count_machines_by_type/);
  });

  it('a plugin declaring a tool under a built-in name fails the start, naming the plugin and the tool', async () => {
    const clash = definePlugin<GatewayContext>({
      name: 'example-clash',
      dependsOn: ['mcp'],
      tools: [{ ...countTool, name: 'list_machines' }],
      register() {},
    });
    await expect(startTestGateway({}, undefined, { plugins: [...TEST_PLUGINS, clash] })).rejects.toThrow(
      "plugin 'example-clash' failed to start: MCP tool 'list_machines' is registered twice",
    );
  });
});

describe('MCP tool registry', () => {
  it('refuses a malformed name, a missing description and a non-object input, saying what is accepted', () => {
    const registry = new McpToolRegistry();
    expect(() => registry.register({ ...countTool, name: 'has space' })).toThrow(new ToolRegistryError(`MCP tool name "has space" is not accepted; accepted: 1-64 letters, digits, '_' or '-'`));
    expect(() => registry.register({ ...countTool, name: 'x'.repeat(65) })).toThrow(/is not accepted/);
    expect(() => registry.register({ ...countTool, description: '' })).toThrow("MCP tool 'count_machines_by_type' needs a title and a description");
    expect(() => registry.register(defineTool({ ...countTool, input: z.string() }))).toThrow("MCP tool 'count_machines_by_type': input must be a zod object schema");
    expect(registry.names()).toEqual([]);
    const before = registry.revision;
    registry.register(countTool);
    expect(registry.revision).toBe(before + 1);
    expect(registry.get('count_machines_by_type')).toBe(countTool);
  });
});
