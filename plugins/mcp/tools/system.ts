/** The tools about the gateway itself: system information and the error log. */
import { z } from 'zod';
import type { InterfaceEntry } from '../../../core/interfaces/registry.js';
import { SYSTEM } from '../../../core/roles/gateway/contract/system.js';
import { TIME_PARAM_SUMMARY, timeParamSchema } from '../../../core/interfaces/time-params.js';
import { defineTool, defined, type ToolCaller, type ToolDefinition } from '../tool-runtime.js';
import { end } from './params.js';

export const SYSTEM_SECTIONS = {
  gateway: SYSTEM.gatewayInfo,
  core: SYSTEM.info,
  license: SYSTEM.licenseInfo,
  services: SYSTEM.serviceStatus,
  time: SYSTEM.timeZone,
  hardware: SYSTEM.hardwareResources,
} satisfies Record<string, InterfaceEntry>;

/** Fields of gateway information never returned through MCP (GW-14), whatever the interface gives. */
const HIDDEN_GATEWAY_FIELDS = ['accessToken'];

async function sections(caller: ToolCaller, entries: Record<string, InterfaceEntry>) {
  const out: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  await Promise.all(
    Object.entries(entries).map(async ([key, entry]) => {
      const r = await caller.section(entry);
      if (r.ok) out[key] = r.data;
      else errors[key] = r.message;
    }),
  );
  return { out, errors };
}

export const SYSTEM_TOOLS: readonly ToolDefinition[] = [
  defineTool({
    name: 'get_system_info',
    title: 'Gateway system information',
    description:
      'One call for the gateway: identity and alias, core version, license, services (status and queues), time (current time, time zone, offset) and hardware (resource usage); includeNetwork=true adds network adapters. Failed sections are listed under errors.',
    input: z.object({ includeNetwork: z.boolean().default(false).describe('true adds network adapters (default false)') }).strict(),
    primary: SYSTEM.info,
    async run(input, caller) {
      const entries: Record<string, InterfaceEntry> = { ...SYSTEM_SECTIONS, ...(input.includeNetwork ? { network: SYSTEM.networkAdapters } : {}) };
      const { out, errors } = await sections(caller, entries);
      if (out.gateway && typeof out.gateway === 'object') {
        out.gateway = Object.fromEntries(Object.entries(out.gateway).filter(([k]) => !HIDDEN_GATEWAY_FIELDS.includes(k)));
      }
      return Object.keys(errors).length ? { ...out, errors } : out;
    },
  }),
  defineTool({
    name: 'get_error_log',
    title: 'Gateway error log',
    description: 'The gateway’s interface error log; limit keeps the most recent rows. Returns {window, total, returned, truncated, data}.',
    input: z
      .object({
        start: timeParamSchema.optional().describe(`Window start (default: since the gateway started): ${TIME_PARAM_SUMMARY}`),
        end,
        limit: z.number().int().min(0).default(200).describe('most recent rows to return (default 200; 0 = all in the window)'),
      })
      .strict(),
    primary: SYSTEM.errorLog,
    run: (input, caller) => caller.call(SYSTEM.errorLog, defined(input)),
  }),
];
