/**
 * MCP tool calls, independent of the transport that carries them. The
 * gateway's /mcp (Streamable HTTP) calls this, and so does any other
 * transport (a relay through a broker): the same validation, registry,
 * per-section `Forbidden:`, error texts and listing, whatever carried the
 * request.
 */
import type { Logger } from 'pino';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { quote, toGatewayError } from '../interfaces/errors.js';
import type { InterfaceRegistry, Principal } from '../interfaces/registry.js';
import { createToolCaller, ToolFailure, type ToolCatalogueReader } from './tools.js';
import { parseOrThrow } from '../interfaces/schema-errors.js';
import { serverInstructions } from './instructions.js';
import { inToolCallSpan } from '../telemetry/calls.js';
import { tracingEnabled } from '../telemetry/tracing.js';

/** The text of a successful result; a transport may keep large answers aside (the HTTP transport's frozen answers). */
export type ResultRenderer = (result: unknown) => string;

const plainJson: ResultRenderer = (result) => JSON.stringify(result);

export interface ToolDispatcher {
  /** The tools as `tools/list` lists them; computed once per registry revision. */
  list(): Tool[];
  /**
   * Runs one `tools/call` as `principal` from `sourceIp`; failures are tool
   * errors (`isError`), never exceptions. A relayed call passes its
   * correlation id, which its interface calls, log lines and error-log
   * entries carry.
   */
  call(request: { name: string; arguments?: unknown }, principal: Principal, sourceIp: string, options?: { render?: ResultRenderer; correlationId?: string }): Promise<CallToolResult>;
}

/** What another server of the same tools lists, and how it words their failures: the catalogue without the tools' runners. */
export interface ToolCatalogue {
  list(): Tool[];
  /** The interface a tool's errors name; undefined for an unknown tool. */
  primaryPath(name: string): string | undefined;
  /** The `initialize` instructions. */
  instructions(docsUrl: string): string;
}

/** The registry's tools as `tools/list` lists them, computed once per registry revision. */
function lister(registry: ToolCatalogueReader): () => Tool[] {
  let listed: { revision: number; tools: Tool[] } | undefined;
  return () => {
    if (listed?.revision !== registry.revision) {
      listed = {
        revision: registry.revision,
        tools: registry.list().map(({ tool: t, inputSchema }) => ({
          name: t.name,
          title: t.title,
          description: t.description,
          inputSchema: inputSchema as Tool['inputSchema'],
          annotations: { title: t.title, readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
        })),
      };
    }
    return listed.tools;
  };
}

export function toolCatalogue(registry: ToolCatalogueReader): ToolCatalogue {
  return { list: lister(registry), primaryPath: (name) => registry.get(name)?.primary.path, instructions: serverInstructions };
}

export function createToolDispatcher(ctx: { interfaces: InterfaceRegistry; tools: ToolCatalogueReader; logger: Logger }): ToolDispatcher {
  const registry = ctx.tools;
  return {
    list: lister(registry),
    call(request, principal, sourceIp, options = {}) {
      if (!tracingEnabled()) return callTool(request, principal, sourceIp, options);
      return inToolCallSpan(request, async (note) => {
        const result = await callTool(request, principal, sourceIp, options);
        note.set({ 'cncgw.outcome': result.isError ? 'tool_error' : 'ok' });
        if (result.isError) note.fail('tool_error');
        return result;
      });
    },
  };

  async function callTool(request: { name: string; arguments?: unknown }, principal: Principal, sourceIp: string, options: { render?: ResultRenderer; correlationId?: string }): Promise<CallToolResult> {
    const render = options.render ?? plainJson;
    const { correlationId } = options;
    const tool = registry.get(request.name);
    if (!tool) return { content: [{ type: 'text', text: `Unknown tool ${quote(request.name)}; accepted: ${registry.names().join(', ')}` }], isError: true };
    try {
      let input: unknown;
      try {
        input = parseOrThrow(tool.input, request.arguments ?? {});
      } catch (err) {
        throw new ToolFailure(tool.primary.path, toGatewayError(err));
      }
      const result = await tool.run(input, createToolCaller(ctx, principal, sourceIp, correlationId));
      return { content: [{ type: 'text', text: render(result) }] };
    } catch (err) {
      const message = err instanceof ToolFailure ? err.message : toGatewayError(err).toToolMessage(tool.primary.path);
      if (!(err instanceof ToolFailure)) ctx.logger.error({ err, tool: tool.name, ...(correlationId !== undefined ? { correlationId } : {}) }, 'tool failed unexpectedly');
      return { content: [{ type: 'text', text: message }], isError: true };
    }
  }
}
