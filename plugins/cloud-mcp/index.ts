/**
 * The cloud's POST /mcp, through the one MCP door (core/mcp/http-door.ts):
 * the gateways' tool catalogue (the same tools, schemas, annotations and
 * instructions as a gateway's /mcp), a tool call relayed to the gateway the
 * `accessToken` header selects (GW-85). Without a token, `initialize` and
 * `tools/list` answer (they reveal no gateway's data); a tool call answers
 * the GW-86 text. A plain tools/call is answered without an SDK server
 * (fast-call.ts); the SDK's answers are completed with the gateway's
 * literals, which the SDK sees as placeholders.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { joinedLiteral } from '../../core/cloud-wire/protocol.js';
import type { Splices } from '../../core/mcp/frozen-answers.js';
import { serveMcpDoor } from '../../core/mcp/http-door.js';
import { definePlugin } from '../../core/runtime/plugin-host.js';
import type { CloudContext } from '../../core/roles/cloud/context.js';
import { CLOUD_MCP_FIELDS } from './config.js';
import { isRefusal, McpOAuth, type McpCaller } from './mcp-auth.js';
import { PlantCalls } from './plant-calls.js';
import { plainToolCall, toolCallResponse } from './fast-call.js';
import { relayedCall, type ToolAnswer } from './relayed-call.js';
import { ResponseBuffers } from './response-buffers.js';

export { plainToolCall, toolCallResponse } from './fast-call.js';
export { UNAUTHORIZED_TEXT } from './relayed-call.js';
export { ResponseBuffers } from './response-buffers.js';

const toolError = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });

/** A token check that could not be made: the database (PostgreSQL, shared by the instances) does not answer. */
const UNCHECKED = Symbol('unchecked');
export const TOKEN_CHECK_UNAVAILABLE_TEXT = 'The cloud cannot check the accessToken now: its token database does not answer. Retry in a moment.';

export const cloudMcpPlugin = definePlugin<CloudContext, typeof CLOUD_MCP_FIELDS>({
  name: 'cloud-mcp',
  dependsOn: ['cloud-relay'],
  config: { section: 'cloud', fields: CLOUD_MCP_FIELDS },
  register(ctx) {
    const { catalogue, logger } = ctx;
    const relayed = relayedCall({ relay: ctx.services.get('cloud.relay'), catalogue, deadlineMs: ctx.settings.callDeadlineMs, logger });
    /** The token's id, undefined for none or an unknown one, or UNCHECKED when the tokens' database does not answer. */
    const tokenOf = async (request: FastifyRequest): Promise<string | undefined | typeof UNCHECKED> => {
      const header = request.headers.accesstoken;
      try {
        return await ctx.tokens.verify(typeof header === 'string' ? header : undefined);
      } catch (err) {
        logger.error({ err: (err as Error).message }, 'cloud: an accessToken could not be checked; the tokens\' database does not answer');
        return UNCHECKED;
      }
    };
    const callTool = (tokenId: string | undefined | typeof UNCHECKED, name: string, args: Record<string, unknown> | undefined, correlation: string | string[] | undefined): Promise<ToolAnswer> =>
      tokenId === UNCHECKED ? Promise.resolve({ text: TOKEN_CHECK_UNAVAILABLE_TEXT, isError: true }) : relayed(tokenId, name, args, correlation);
    // Only an answer from a gateway can be malformed, so its token was checked.
    const malformed = (tokenId: string | undefined | typeof UNCHECKED) => logger.warn({ gateway: tokenId === UNCHECKED ? undefined : tokenId }, 'cloud: a gateway\'s answer is not one JSON string literal; it was not passed on');
    const buffers = new ResponseBuffers();
    // OAuth 2.1 for remote MCP clients, when configured: who each request is, decided from its headers before its body.
    const oauth = ctx.settings.mcpAuth ? new McpOAuth(ctx.settings.mcpAuth) : undefined;
    const plants = new PlantCalls({ tokens: ctx.tokens, catalogue, relayed, isOnline: (id) => ctx.services.get('cloud.relay').isOnline(id) });
    const callers = new WeakMap<FastifyRequest, McpCaller>();
    const oauthCaller = (request: FastifyRequest) => {
      const caller = callers.get(request);
      return caller?.kind === 'oauth' ? caller : undefined;
    };
    oauth?.serveMetadata(ctx.http);
    // Unique to this process, so no tool text can hold one by chance.
    const answerPrefix = `relay-answer-${randomUUID()}-`;
    let answerCount = 0;

    serveMcpDoor(ctx.http, {
      path: '/mcp',
      allowedOrigins: ctx.allowedOrigins,
      allowedHosts: ctx.settings.allowedHosts,
      noOriginsText: 'no browser origins',
      async admit(request) {
        if (!oauth) return null;
        const caller = await oauth.identify(request);
        if (isRefusal(caller)) return caller;
        callers.set(request, caller);
        return null;
      },
      async fastPath(request, reply) {
        if (oauthCaller(request)) return false;
        const fast = plainToolCall(request);
        if (!fast) return false;
        const tokenId = await tokenOf(request);
        const answer = await callTool(tokenId, fast.name, fast.arguments, request.headers['x-correlation-id']);
        let slab: Buffer | undefined;
        const body = toolCallResponse(fast.id, answer, () => malformed(tokenId), (size) => {
          const { buffer, pooled } = buffers.take(size);
          if (pooled) slab = buffer;
          return buffer;
        });
        // The slab is used again once the response is written (or its connection gone).
        if (slab) reply.raw.once('close', () => buffers.give(slab as Buffer));
        void reply.code(200).header('content-type', 'application/json').send(body);
        return true;
      },
      async server(request, { jsonSchemaValidator }) {
        const caller = oauthCaller(request);
        const tokenId = caller ? undefined : await tokenOf(request);
        const instructions = catalogue.instructions(`${request.protocol}://${request.headers.host ?? 'localhost'}/mcp`);
        const server = new Server({ name: 'cnc-machine-gateway-cloud', version: ctx.version }, { capabilities: { tools: {} }, instructions, jsonSchemaValidator });
        server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: caller ? plants.list(await plants.visible(caller)) : catalogue.list() }));
        // Answers go into the response as the gateway sent them (a JSON string literal, checked): the SDK sees a placeholder.
        const splices: Splices = new Map();
        server.setRequestHandler(CallToolRequestSchema, async (req) => {
          const correlation = request.headers['x-correlation-id'];
          const answer = caller ? await plants.call(caller, req.params.name, req.params.arguments, correlation) : await callTool(tokenId, req.params.name, req.params.arguments, correlation);
          if ('text' in answer) return toolError(answer.text);
          const literal = joinedLiteral(answer);
          if (!literal) {
            malformed(tokenId);
            return toolError(answer.ifMalformed);
          }
          const placeholder = `${answerPrefix}${++answerCount}`;
          splices.set(placeholder, [literal]);
          return { content: [{ type: 'text', text: placeholder }], ...(answer.isError ? { isError: true } : {}) };
        });
        return { server, splices };
      },
    });
  },
});
