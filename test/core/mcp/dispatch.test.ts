/**
 * The transport-neutral tool dispatch: called directly (as another
 * transport would call it) it gives the same listing, answers and error
 * texts as the gateway's /mcp over Streamable HTTP, for the same principal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createToolDispatcher, type ToolDispatcher } from '../../../core/mcp/dispatch.js';
import type { Principal } from '../../../core/interfaces/registry.js';
import { simMachine, startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { connectMcp, type McpSession } from '../../fixtures/mcp-client.js';

const textOf = (r: { content: unknown[] }) => (r.content as { text: string }[]).map((c) => c.text).join('');

describe('tool dispatch without a transport', () => {
  let gw: TestGateway;
  let dispatcher: ToolDispatcher;
  let viaHttp: McpSession;
  let limitedHttp: McpSession;
  const limited: Principal = { username: 'viewer', isAdmin: false, method: 'secretKey' };
  const admin: Principal = { username: 'admin', isAdmin: true, method: 'secretKey' };

  beforeAll(async () => {
    gw = await startTestGateway({ machines: [simMachine('D1'), simMachine('D2')], groups: [{ groupID: 'g1', name: 'G1', machineIDs: ['D1', 'D2'] }] });
    const url = await gw.gateway.listen({ host: '127.0.0.1', port: 0 });
    await gw.request('POST', '/api/security/user/add', { username: 'viewer', password: 'viewer-password-1', authorizedApis: ['/api/config/machines', '/api/system/gateway-info'] });
    const key = ((await gw.request('POST', '/api/security/secret-key/create', { username: 'viewer' })).body.data as { key: string }).key;
    const adminKey = ((await gw.request('POST', '/api/security/secret-key/create', { username: 'admin' })).body.data as { key: string }).key;
    viaHttp = await connectMcp(url, adminKey);
    limitedHttp = await connectMcp(url, key);
    dispatcher = createToolDispatcher({ interfaces: gw.gateway.context.interfaces, tools: gw.gateway.context.tools, logger: pino({ level: 'silent' }) });
  });
  afterAll(async () => {
    await viaHttp?.close();
    await limitedHttp?.close();
    await gw?.stop();
  });

  it('GW-36 GW-35 lists the same tools, schemas and annotations as /mcp', async () => {
    const listed = (await viaHttp.client.listTools()).tools;
    expect(dispatcher.list()).toEqual(listed);
    expect(dispatcher.list()).toHaveLength(13);
  });

  it('GW-92 answers and errors read the same: a result, a validation error, an unknown tool, an unknown machine', async () => {
    for (const [name, args] of [
      ['list_groups', {}],
      ['list_machines', {}],
      ['read_machine', { machineID: 'D1', groupID: 'g1' }],
      ['read_machine', { machineID: 'NOPE' }],
      ['no_such_tool', {}],
    ] as const) {
      const direct = await dispatcher.call({ name, arguments: args }, admin, '127.0.0.1');
      const http = await viaHttp.call(name, args);
      expect({ name, text: textOf(direct), isError: direct.isError === true }).toEqual({ name, text: http.text, isError: http.isError });
    }
  });

  it('GW-77 GW-92 the principal\'s authorised API list applies the same way: a composite tool reports Forbidden: sections, a single-interface tool fails', async () => {
    for (const [name, args] of [
      ['get_system_info', {}],
      ['list_groups', {}],
      ['list_machines', {}],
    ] as const) {
      const direct = await dispatcher.call({ name, arguments: args }, limited, '127.0.0.1');
      const http = await limitedHttp.call(name, args);
      expect({ name, text: textOf(direct), isError: direct.isError === true }).toEqual({ name, text: http.text, isError: http.isError });
    }
    expect(textOf(await dispatcher.call({ name: 'list_groups' }, limited, '127.0.0.1'))).toMatch(/^\/api\/config\/groups failed: FORBIDDEN\(5\)/);
    expect(textOf(await dispatcher.call({ name: 'get_system_info' }, limited, '127.0.0.1'))).toMatch(/"Forbidden: \/api\//);
  });
});
