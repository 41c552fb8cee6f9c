/**
 * Event-loop delay, sampled from when the plugin starts until it stops.
 * Node's histogram records the whole interval between its timer's wake-ups,
 * the sampling resolution included; the resolution is subtracted so that an
 * idle loop reports about 0 ms.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

const RESOLUTION_MS = 10;
const NS_PER_MS = 1e6;

export interface EventLoopDelay {
  /** Samples taken since the monitor started. */
  samples: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  meanMs: number | null;
  resolutionMs: number;
}

export class EventLoopMonitor {
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });

  start(): void {
    this.histogram.enable();
  }

  stop(): void {
    this.histogram.disable();
  }

  /** The delay figures since start; null figures until the first sample. */
  read(): EventLoopDelay {
    const h = this.histogram;
    const delayMs = (ns: number) => Math.round(Math.max(0, ns / NS_PER_MS - RESOLUTION_MS) * 1000) / 1000;
    const none = h.count === 0;
    return {
      samples: h.count,
      p50Ms: none ? null : delayMs(h.percentile(50)),
      p99Ms: none ? null : delayMs(h.percentile(99)),
      maxMs: none ? null : delayMs(h.max),
      meanMs: none ? null : delayMs(h.mean),
      resolutionMs: RESOLUTION_MS,
    };
  }
}
