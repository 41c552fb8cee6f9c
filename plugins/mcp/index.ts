/**
 * The MCP server at POST /mcp, on the gateway's own port, through the one
 * MCP door (core/mcp/http-door.ts): Origin and Host allow-lists (the `mcp`
 * section), then the same access policy as /api (credentials, security
 * control, IP white list), all before the body is read. With `mcp.mcpAuth`,
 * an identity provider's access tokens are taken too (./oauth.ts): the
 * caller then sees the machines of the groups its claims map to.
 *
 * The tools served are those of the gateway's tool registry (`ctx.tools`,
 * core/mcp/tools.ts), read at request time: this plugin declares its
 * built-in tools (`tools: TOOLS`), and any other plugin may declare its own.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { definePlugin } from '../../core/runtime/plugin-host.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { authenticateRequest } from '../../core/http/http-server.js';
import { ANONYMOUS } from '../../core/interfaces/registry.js';
import { FrozenAnswers, type Splices } from '../../core/mcp/frozen-answers.js';
import { serverInstructions } from '../../core/mcp/instructions.js';
import { createToolDispatcher } from '../../core/mcp/dispatch.js';
import { countedToolCalls } from './metrics.js';
import { serveMcpDoor } from '../../core/mcp/http-door.js';
import { MCP_FIELDS } from './config.js';
import { GatewayMcpOAuth } from './oauth.js';
import { TOOLS } from './tools.js';

export { MCP_BODY_LIMIT } from '../../core/mcp/http-door.js';
export const MCP_PATH = '/mcp';

/** Frozen answers of every request, serialised once. */
const frozenAnswers = new FrozenAnswers();

export const mcpPlugin = definePlugin<GatewayContext, typeof MCP_FIELDS>({
  name: 'mcp',
  dependsOn: ['gateway-api', 'system', 'error-log'],
  config: { section: 'mcp', fields: MCP_FIELDS },
  tools: TOOLS,
  register(ctx) {
    // The same dispatch for every transport (core/mcp/dispatch.ts).
    const dispatcher = countedToolCalls(createToolDispatcher(ctx), ctx.metrics, () => ctx.tools.names());
    const { mcpAuth, ...doorSettings } = ctx.settings;
    // OAuth 2.1 for remote MCP clients, when configured, beside the gateway's JWTs and secret keys (./oauth.ts).
    const oauth = mcpAuth ? new GatewayMcpOAuth(mcpAuth) : undefined;
    oauth?.resource.serveMetadata(ctx.http);
    serveMcpDoor(ctx.http, {
      path: MCP_PATH,
      ...doorSettings,
      noOriginsText: 'no browser origins (configure mcp.allowedOrigins)',
      async admit(request, reply) {
        const token = oauth?.providerToken(request);
        if (oauth && token !== undefined) {
          const principal = await oauth.principal(token);
          if ('status' in principal) return principal;
          request.principal = principal;
          return null;
        }
        const refused = await authenticateRequest(ctx.interfaces, request, reply, MCP_PATH, undefined);
        return oauth && refused?.httpStatus === 401 ? oauth.challenged(request, refused) : refused;
      },
      server(request, { jsonSchemaValidator }) {
        const principal = request.principal ?? ANONYMOUS;
        const instructions = serverInstructions(`${request.protocol}://${request.headers.host ?? 'localhost'}/api/docs`);
        const server = new Server({ name: 'cnc-machine-gateway', version: ctx.version }, { capabilities: { tools: {} }, instructions, jsonSchemaValidator });
        server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: dispatcher.list() }));
        const splices: Splices = new Map();
        server.setRequestHandler(CallToolRequestSchema, (req) =>
          dispatcher.call(req.params, principal, request.ip, { render: (result) => frozenAnswers.textOrPlaceholder(result, splices) }),
        );
        return { server, splices };
      },
    });
  },
});
