/**
 * The 13 read-only MCP tools, in the order tools/list shows them. Each is
 * written against interface paths only; the registry runs them with the
 * caller's identity. Schemas are written for an LLM: every parameter says
 * its type, default, accepted values and where its IDs come from. The tools
 * live in tools/, one file per subject.
 */
import type { ToolDefinition } from './tool-runtime.js';
import { FLEET_TOOLS } from './tools/fleet.js';
import { HISTORY_TOOLS } from './tools/history.js';
import { LIVE_READ_TOOLS, MACHINE_TOOLS } from './tools/machines.js';
import { PROGRAM_TOOLS } from './tools/programs.js';
import { SYSTEM_TOOLS } from './tools/system.js';
import { TASK_DATA_TOOLS } from './tools/task-data.js';

export { READ_MACHINE_ITEMS } from './tools/machines.js';
export { SYSTEM_SECTIONS } from './tools/system.js';

export const TOOLS: readonly ToolDefinition[] = [
  ...MACHINE_TOOLS,
  ...FLEET_TOOLS,
  ...TASK_DATA_TOOLS,
  ...LIVE_READ_TOOLS,
  ...PROGRAM_TOOLS,
  ...HISTORY_TOOLS,
  ...SYSTEM_TOOLS,
];
