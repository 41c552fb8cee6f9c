/**
 * How an MCP tool reaches the gateway: every call goes through the interface
 * registry with the caller's identity, so each interface a tool uses is
 * authorised on its own. A single-interface tool turns a failure into a tool
 * error; a composite tool turns a failed section into a message (starting
 * `Forbidden:` when unauthorised) and goes on with the others.
 */
import type { z } from 'zod';
import type { GatewayContext } from '../../core/context.js';
import { GatewayError } from '../../core/errors.js';
import type { Principal } from '../../core/interfaces.js';

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

export interface ToolCaller {
  /** Calls one interface; a failure ends the tool with a tool error. */
  call<T = unknown>(path: string, input?: Record<string, unknown>): Promise<T>;
  /** Calls one interface and returns its whole HTTP response body, for passthrough tools. */
  body(path: string, input?: Record<string, unknown>): Promise<{ errorCode: 0; errorMsg: 'OK'; data: unknown }>;
  /** Calls one interface as a section of a composite result. */
  section<T = unknown>(path: string, input?: Record<string, unknown>): Promise<Section<T>>;
}

export function createToolCaller(ctx: GatewayContext, principal: Principal, sourceIp: string): ToolCaller {
  const run = async <T>(path: string, input: Record<string, unknown> = {}): Promise<Section<T>> => {
    const result = await ctx.interfaces.call<T>(path, input, { principal, sourceIp });
    if (result.ok) return { ok: true, data: result.data };
    return { ok: false, message: sectionMessage(path, result.error), error: result.error, path };
  };
  return {
    async call<T>(path: string, input?: Record<string, unknown>) {
      const r = await run<T>(path, input);
      if (!r.ok) throw new ToolFailure(path, r.error);
      return r.data;
    },
    async body(path, input) {
      const r = await run(path, input);
      if (!r.ok) throw new ToolFailure(path, r.error);
      return { errorCode: 0, errorMsg: 'OK', data: r.data };
    },
    section: run,
  };
}

/** What a tool is: a name, an LLM-facing description and schema, the interface it answers for, and its run function. */
export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  description: string;
  input: S;
  /** The interface named in validation errors (the tool's main interface). */
  primaryPath: string;
  run(input: z.output<S>, caller: ToolCaller): Promise<unknown>;
}

/** Declares a tool with its input type inferred from the schema. */
export function defineTool<S extends z.ZodType>(tool: ToolDefinition<S>): ToolDefinition {
  return tool as unknown as ToolDefinition;
}

/** Drops undefined values so optional parameters that were omitted are not sent on. */
export function defined(input: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
}

/** "machineID or groupID, one of them": both or neither is a validation error listing the accepted forms. */
export function oneTarget(path: string, input: { machineID?: string | undefined; groupID?: string | undefined }): { kind: 'machine'; id: string } | { kind: 'group'; id: string } {
  if (input.machineID !== undefined && input.groupID !== undefined) {
    throw new ToolFailure(
      path,
      new GatewayError('INVALID_PARAMETER', 'machineID and groupID were both given; accepted: exactly one of machineID (from list_machines) or groupID (from list_groups)'),
    );
  }
  if (input.machineID !== undefined) return { kind: 'machine', id: input.machineID };
  if (input.groupID !== undefined) return { kind: 'group', id: input.groupID };
  throw new ToolFailure(path, new GatewayError('INVALID_PARAMETER', 'neither machineID nor groupID was given; accepted: exactly one of machineID (from list_machines) or groupID (from list_groups)'));
}
