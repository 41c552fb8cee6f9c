/**
 * MCP tools and their registry on the gateway context. Any plugin declares
 * its tools (`tools: [defineTool({...})]` of definePlugin); the plugin host
 * registers every declared tool in boot order before any plugin registers,
 * so a clash fails the start naming the plugin and the tool. The mcp plugin
 * (plugins/mcp) declares its built-in tools the same way and serves whatever
 * the registry holds, read-only on the context (`ToolCatalogueReader`), so a
 * plugin contributes a tool without importing the mcp plugin; the cloud
 * relay lists the same declared tools (core/roles/cloud/definition.ts).
 *
 * How a tool reaches the gateway: every call goes through the interface
 * registry with the caller's identity, so each interface a tool uses is
 * authorised on its own. A single-interface tool turns a failure into a tool
 * error; a composite tool turns a failed section into a message (starting
 * `Forbidden:` when unauthorised) and goes on with the others. Every tool is
 * served as read-only and idempotent (GW-35): a tool reads; what writes is an
 * HTTP interface.
 */
import type { z } from 'zod';
import { GatewayError, toGatewayError } from '../interfaces/errors.js';
import type { EntryInput, EntryOutput, InterfaceEntry, InterfaceRegistry, Principal } from '../interfaces/registry.js';
import { toJsonSchema, type JsonSchema } from '../http/json-schema.js';
import { MachineScope } from './machine-scope.js';

/** A failure that ends the tool call as an MCP tool error with the standard message. */
export class ToolFailure extends Error {
  constructor(
    readonly path: string,
    readonly error: GatewayError,
  ) {
    super(error.toToolMessage(path));
    this.name = 'ToolFailure';
  }
}

/** A section of a composite result: its data, or the message that replaces it. */
export type Section<T> = { ok: true; data: T } | { ok: false; message: string; error: GatewayError; path: string };

/** The message a failed section shows; unauthorised sections start with `Forbidden:`. */
export function sectionMessage(path: string, error: GatewayError): string {
  const text = error.toToolMessage(path);
  return error.errorName === 'FORBIDDEN' ? `Forbidden: ${text}` : text;
}

/**
 * How a tool calls interfaces: by their entries (the gateway's are in
 * core/roles/gateway/contract/), so each answer has its entry's output type.
 */
export interface ToolCaller {
  /** Calls one interface; a failure ends the tool with a tool error. */
  call<E extends InterfaceEntry>(entry: E, input?: EntryInput<E>): Promise<EntryOutput<E>>;
  /** Calls one interface and returns its whole HTTP response body, for passthrough tools. */
  body<E extends InterfaceEntry>(entry: E, input?: EntryInput<E>): Promise<{ errorCode: 0; errorMsg: 'OK'; data: EntryOutput<E> }>;
  /** Calls one interface as a section of a composite result. */
  section<E extends InterfaceEntry>(entry: E, input?: EntryInput<E>): Promise<Section<EntryOutput<E>>>;
}

/** The caller a tool runs with: the interface registry, as `principal` from `sourceIp`, with the call's correlation id if it has one. */
export function createToolCaller(ctx: { interfaces: InterfaceRegistry }, principal: Principal, sourceIp: string, correlationId?: string): ToolCaller {
  // A caller limited to some machine groups sees their machines only (./machine-scope.ts); read once per tool call.
  const { machineGroups } = principal;
  let scope: Promise<MachineScope> | undefined;
  const scoped = machineGroups ? () => (scope ??= MachineScope.of(ctx.interfaces, { ...principal, machineGroups }, sourceIp)) : undefined;
  const failed = (entry: InterfaceEntry, error: GatewayError): Section<never> => ({ ok: false, message: sectionMessage(entry.path, error), error, path: entry.path });
  const section = async <E extends InterfaceEntry>(entry: E, input?: EntryInput<E>): Promise<Section<EntryOutput<E>>> => {
    let within: MachineScope | undefined;
    if (scoped) {
      try {
        within = await scoped();
      } catch (err) {
        return failed(entry, toGatewayError(err));
      }
      const refused = within.refusal(input);
      if (refused) return failed(entry, refused);
    }
    // An omitted input is the empty object, which the entry's schema then judges.
    const result = await ctx.interfaces.call(entry, input ?? ({} as EntryInput<E>), { principal, sourceIp, ...(correlationId !== undefined ? { correlationId } : {}) });
    if (result.ok) return { ok: true, data: within ? within.narrow(entry, result.data) : result.data };
    return failed(entry, result.error);
  };
  const call = async <E extends InterfaceEntry>(entry: E, input?: EntryInput<E>): Promise<EntryOutput<E>> => {
    const r = await section(entry, input);
    if (!r.ok) throw new ToolFailure(entry.path, r.error);
    return r.data;
  };
  return {
    call,
    body: async (entry, input) => ({ errorCode: 0, errorMsg: 'OK', data: await call(entry, input) }),
    section,
  };
}

/** What a tool is: a name, an LLM-facing description and schema, the interface it answers for, and its run function. */
export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  description: string;
  input: S;
  /** The tool's main interface, named in its validation errors. */
  primary: InterfaceEntry;
  run(input: z.output<S>, caller: ToolCaller): Promise<unknown>;
}

/** Declares a tool with its input type inferred from the schema. */
export function defineTool<S extends z.ZodType>(tool: ToolDefinition<S>): ToolDefinition {
  return tool as unknown as ToolDefinition;
}

/** MCP tool names: 1-64 letters, digits, `_` and `-` (what every MCP client accepts). */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export class ToolRegistryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolRegistryError';
  }
}

/** The tools as plugins and servers read them: no registration. */
export interface ToolCatalogueReader {
  /** The tool named `name`, if registered. */
  get(name: string): ToolDefinition | undefined;
  /** Every tool with its input as JSON Schema, in registration order. */
  list(): { tool: ToolDefinition; inputSchema: JsonSchema }[];
  /** The registered names, in registration order. */
  names(): string[];
  /** Grows with every registration, so a listing computed from the tools can be kept until it changes. */
  readonly revision: number;
}

/** The MCP tools of one gateway, in the order they were registered. */
export class McpToolRegistry implements ToolCatalogueReader {
  private readonly tools = new Map<string, { tool: ToolDefinition; inputSchema: JsonSchema }>();
  private changes = 0;

  /** Adds a tool; a name is registered once. */
  register(tool: ToolDefinition): void {
    if (!TOOL_NAME_PATTERN.test(tool.name)) {
      throw new ToolRegistryError(`MCP tool name ${JSON.stringify(String(tool.name).slice(0, 80))} is not accepted; accepted: 1-64 letters, digits, '_' or '-'`);
    }
    if (this.tools.has(tool.name)) throw new ToolRegistryError(`MCP tool '${tool.name}' is registered twice`);
    if (!tool.title || !tool.description) throw new ToolRegistryError(`MCP tool '${tool.name}' needs a title and a description: clients show them to the model`);
    // MCP lists a tool's input as a JSON Schema of type object; anything else would break every client's tools/list.
    const inputSchema = toJsonSchema(tool.input, 'input');
    if (inputSchema.type !== 'object') throw new ToolRegistryError(`MCP tool '${tool.name}': input must be a zod object schema (MCP tool arguments are an object)`);
    this.tools.set(tool.name, { tool, inputSchema });
    this.changes++;
  }

  /** The tool named `name`, if registered. */
  get(name: string): ToolDefinition | undefined {
    return this.tools.get(name)?.tool;
  }

  /** Every tool with its input as JSON Schema (computed once, at registration), in registration order. */
  list(): { tool: ToolDefinition; inputSchema: JsonSchema }[] {
    return [...this.tools.values()];
  }

  /** The registered names, in registration order. */
  names(): string[] {
    return [...this.tools.keys()];
  }

  /** Grows with every registration, so a listing computed from the tools can be kept until it changes. */
  get revision(): number {
    return this.changes;
  }
}
