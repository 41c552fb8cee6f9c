/**
 * The gateway's MCP tool calls on its role's registry: counted and timed by
 * tool and outcome (`ok`, or `error` for a tool error), around the one
 * dispatcher every transport uses. A name that is not a tool is counted as
 * `tool="unknown"`, so a client cannot create series.
 *
 * - `gateway_mcp_tool_calls_total{tool,outcome}`
 * - `gateway_mcp_tool_call_duration_seconds{tool,outcome}` (histogram)
 */
import type { ToolDispatcher } from '../../core/mcp/dispatch.js';
import { HTTP_DURATION_BUCKETS, type RoleMetrics } from '../../core/telemetry/metrics.js';

export function countedToolCalls(dispatcher: ToolDispatcher, metrics: RoleMetrics, toolNames: () => readonly string[]): ToolDispatcher {
  const calls = metrics.counter({ name: 'gateway_mcp_tool_calls_total', help: 'MCP tool calls answered, by tool and outcome.', labelNames: ['tool', 'outcome'] });
  const durations = metrics.histogram({ name: 'gateway_mcp_tool_call_duration_seconds', help: 'Time to answer an MCP tool call, by tool and outcome.', labelNames: ['tool', 'outcome'], buckets: HTTP_DURATION_BUCKETS });
  return {
    list: () => dispatcher.list(),
    async call(request, principal, sourceIp, options) {
      const started = performance.now();
      const result = await dispatcher.call(request, principal, sourceIp, options);
      const labels = { tool: toolNames().includes(request.name) ? request.name : 'unknown', outcome: result.isError ? 'error' : 'ok' };
      calls.inc(labels);
      durations.observe(labels, (performance.now() - started) / 1000);
      return result;
    },
  };
}
