/**
 * /api/system/hardware-resources: CPU, memory, the data dir's disk and the
 * event-loop delay. Every figure comes from the OS or the process in O(1);
 * the disk figures come from one asynchronous statfs, never a directory scan.
 */
import { SYSTEM } from '../../core/roles/gateway/contract/system.js';
import { statfs } from 'node:fs/promises';
import { cpus, freemem, loadavg, totalmem } from 'node:os';
import type { Logger } from 'pino';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import type { EventLoopMonitor } from './event-loop-monitor.js';

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

function cpuFigures() {
  const list = cpus();
  const [oneMinute = 0, fiveMinutes = 0, fifteenMinutes = 0] = loadavg();
  return {
    count: list.length,
    model: list[0]?.model.trim() || null,
    // Always 0 on Windows, which has no load average.
    loadAverage: { oneMinute: round(oneMinute), fiveMinutes: round(fiveMinutes), fifteenMinutes: round(fifteenMinutes) },
  };
}

/** The gateway process: CPU time since the process started and its memory. */
function processFigures() {
  const { user, system } = process.cpuUsage();
  const uptimeMs = process.uptime() * 1000;
  const cpuUserMs = user / 1000;
  const cpuSystemMs = system / 1000;
  const memory = process.memoryUsage();
  return {
    uptimeMs: Math.round(uptimeMs),
    cpuUserMs: Math.round(cpuUserMs),
    cpuSystemMs: Math.round(cpuSystemMs),
    // Of one core: 100 is one core busy all the time, 200 two cores.
    cpuPercent: uptimeMs > 0 ? round(((cpuUserMs + cpuSystemMs) / uptimeMs) * 100) : 0,
    rssBytes: memory.rss,
    heapUsedBytes: memory.heapUsed,
    heapTotalBytes: memory.heapTotal,
  };
}

/** The file system holding the data dir; null figures where the platform cannot tell. */
async function diskFigures(dataDir: string, logger: Logger) {
  try {
    const s = await statfs(dataDir);
    return { totalBytes: s.blocks * s.bsize, freeBytes: s.bfree * s.bsize, availableBytes: s.bavail * s.bsize };
  } catch (err) {
    logger.warn({ err }, 'statfs of the data dir failed');
    return { totalBytes: null, freeBytes: null, availableBytes: null };
  }
}

export function defineHardwareResourcesInterface(ctx: GatewayContext, eventLoop: EventLoopMonitor): void {
  ctx.interfaces.implement(SYSTEM.hardwareResources, {
    handler: async (_input, call) => ({
      cpu: cpuFigures(),
      memory: { totalBytes: totalmem(), freeBytes: freemem() },
      process: processFigures(),
      disk: await diskFigures(ctx.dataDir, call.logger),
      eventLoopDelay: eventLoop.read(),
    }),
  });
}
