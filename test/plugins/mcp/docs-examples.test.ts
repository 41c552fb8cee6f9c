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
