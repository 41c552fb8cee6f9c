/**
 * Helpers of the built-in tools. What a tool is and how it reaches the
 * gateway (the tool caller, tool failures, sections) is core's
 * (core/mcp/tools.ts), so that any plugin can contribute a tool; it is
 * re-exported here for the built-in tools.
 */
import { GatewayError } from '../../core/interfaces/errors.js';
import type { InterfaceEntry } from '../../core/interfaces/registry.js';
import { ToolFailure } from '../../core/mcp/tools.js';

export { createToolCaller, defineTool, sectionMessage, ToolFailure, type Section, type ToolCaller, type ToolDefinition } from '../../core/mcp/tools.js';

/** Drops undefined values so optional parameters that were omitted are not sent on. */
export function defined<T extends Record<string, unknown>>(input: T): T {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as T;
}

/**
 * `project` made once per answer object and frozen: for interfaces that hand
 * out the same frozen answer until their data changes (the configuration's
 * machine list), so a tool's answer made from it is the same frozen object
 * too, whose text core/mcp/frozen-answers.ts then keeps. A new answer object
 * is projected afresh; an answer no longer handed out is forgotten with it.
 */
export function projectedOnce<A extends object, R extends object>(project: (answer: A) => R): (answer: A) => Readonly<R> {
  const made = new WeakMap<A, Readonly<R>>();
  return (answer) => {
    let result = made.get(answer);
    if (result === undefined) {
      result = Object.freeze(project(answer));
      made.set(answer, result);
    }
    return result;
  };
}

/** "machineID or groupID, one of them": both or neither is a validation error listing the accepted forms. */
export function oneTarget(entry: InterfaceEntry, input: { machineID?: string | undefined; groupID?: string | undefined }): { kind: 'machine'; id: string } | { kind: 'group'; id: string } {
  if (input.machineID !== undefined && input.groupID !== undefined) {
    throw new ToolFailure(
      entry.path,
      new GatewayError('INVALID_PARAMETER', 'machineID and groupID were both given; accepted: exactly one of machineID (from list_machines) or groupID (from list_groups)'),
    );
  }
  if (input.machineID !== undefined) return { kind: 'machine', id: input.machineID };
  if (input.groupID !== undefined) return { kind: 'group', id: input.groupID };
  throw new ToolFailure(entry.path, new GatewayError('INVALID_PARAMETER', 'neither machineID nor groupID was given; accepted: exactly one of machineID (from list_machines) or groupID (from list_groups)'));
}
