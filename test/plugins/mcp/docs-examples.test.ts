/** Calls every tool with the example arguments in docs/mcp.md, so the docs cannot drift from the server. */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { connectMcp, type McpSession } from '../../fixtures/mcp-client.js';

const DOC = readFileSync(resolve(import.meta.dirname, '../../../docs/mcp.md'), 'utf8');
const EXAMPLES = [...DOC.matchAll(/```json mcp-example (\w+)\n([\s\S]*?)```/g)].map((m) => ({ tool: m[1] as string, args: JSON.parse(m[2] as string) as Record<string, unknown> }));

let gw: TestGateway;
let mcp: McpSession;

beforeAll(async () => {
  gw = await startTestGateway({
    machines: [
      simMachine('M01', { name: 'VMC 1', machineType: 'machiningCenter', tasks: { CNCStatus: { enabled: true, intervalMs: 200 } } }),
      simMachine('L01', { name: 'Lathe 1', machineType: 'lathe', driverOptions: { seed: 3, machineType: 'lathe', system: 'FANUC' } }),
    ],
    groups: [{ groupID: 'milling', name: 'Milling cell', machineIDs: ['M01', 'L01'] }],
  });
  mcp = await connectMcp(await gw.gateway.listen({ host: '127.0.0.1', port: 0 }), gw.adminToken);
  await vi.waitFor(async () => expect((await gw.request('GET', '/api/task/readTaskData?type=CNCStatus&machineID=M01')).body.errorCode).toBe(0), { timeout: 5000, interval: 50 });
});

afterAll(async () => {
  await mcp?.close();
  await gw?.stop();
});

describe('docs/mcp.md examples', () => {
  it('GW-36 documents an example for every listed tool', async () => {
    const { tools } = await mcp.client.listTools();
    expect(new Set(EXAMPLES.map((e) => e.tool))).toEqual(new Set(tools.map((t) => t.name)));
  });

  for (const example of EXAMPLES) {
    it(`GW-37 ${example.tool} runs with the documented arguments`, async () => {
      const r = await mcp.call(example.tool, example.args);
      expect([example.tool, r.isError, r.isError ? r.text : '']).toEqual([example.tool, false, '']);
      expect(() => r.json()).not.toThrow();
    });
  }
});

/** The interface paths each documented example reaches through the registry. */
async function pathsCalledBy(example: { tool: string; args: Record<string, unknown> }): Promise<string[]> {
  const spy = vi.spyOn(gw.gateway.context.interfaces, 'call');
  try {
    const r = await mcp.call(example.tool, example.args);
    expect([example.tool, r.isError]).toEqual([example.tool, false]);
    return [...new Set(spy.mock.calls.map((c) => c[0].path))];
  } finally {
    spy.mockRestore();
  }
}

describe('what the tools reach', () => {
  it('GW-66 GW-02 no tool reaches a file-stream interface, user configuration or security settings, or any interface that writes', async () => {
    const reached = new Set<string>();
    for (const example of EXAMPLES) for (const path of await pathsCalledBy(example)) reached.add(path);
    expect(reached.size).toBeGreaterThan(10);
    for (const path of reached) {
      expect([path, /^\/api\/(file|security|auth)\//.test(path)]).toEqual([path, false]);
      expect([path, gw.gateway.context.interfaces.get(path)?.method]).toEqual([path, 'GET']);
    }
    // The interfaces that exist and that no tool may reach.
    const sensitive = gw.gateway.context.interfaces.list().filter((d) => /^\/api\/(file|security|auth)\//.test(d.path));
    expect(sensitive.map((d) => d.path)).toEqual(expect.arrayContaining(['/api/file/program/upload', '/api/file/program/download', '/api/security/users', '/api/auth/change-password']));
  });

  it('GW-05 composite tools call several interfaces and merge the results', async () => {
    const composite = { get_fleet_status: 3, read_machine: 2, get_system_info: 6 };
    for (const [tool, atLeast] of Object.entries(composite)) {
      const example = EXAMPLES.find((e) => e.tool === tool);
      if (!example) throw new Error(`docs/mcp.md has no example for ${tool}`);
      const paths = await pathsCalledBy(example);
      expect([tool, paths.length >= atLeast]).toEqual([tool, true]);
    }
  });
});
