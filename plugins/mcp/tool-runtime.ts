/**
 * Helpers of the built-in tools. What a tool is and how it reaches the
 * gateway (the tool caller, tool failures, sections) is core's
 * (core/mcp/tools.ts), so that any plugin can contribute a tool; it is
 * re-exported here for the built-in tools.
 */
import { GatewayError } from '../../core/errors.js';
import { isRecord } from '../../core/json-value.js';
import { ToolFailure } from '../../core/mcp/tools.js';

export { createToolCaller, defineTool, sectionMessage, ToolFailure, type Section, type ToolCaller, type ToolDefinition } from '../../core/mcp/tools.js';

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

/**
 * The answer of an interface without a declared output type
 * (core/roles/gateway/api-outputs.ts), as the object a tool reads fields of;
 * anything else fails the tool as the gateway's own error.
 */
export function answerRecord(path: string, data: unknown): Record<string, unknown> {
  if (isRecord(data)) return data;
  throw new ToolFailure(path, new GatewayError('UNKNOWN_ERROR', `${path} answered ${Array.isArray(data) ? 'an array' : typeof data}, not an object`));
}
