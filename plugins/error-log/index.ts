/**
 * The interface error log behind GET /api/log/error: every failed interface
 * call (authentication and white-list refusals included) with time, path,
 * errorCode, message, user and source IP. Kept in memory and bounded twice,
 * so a flood of failures cannot grow memory or the answer of GET
 * /api/log/error: to the newest `ERROR_LOG_CAPACITY` entries and to
 * `ERROR_LOG_MAX_BYTES` of text, each message cut to
 * `ERROR_LOG_MESSAGE_MAX_CHARS`. It starts empty at every gateway start.
 * A call relayed from a cloud also carries the cloud request's correlationId.
 * Messages come from the error table and never carry credentials.
 */
import { ERROR_LOG_CAPACITY, SYSTEM } from '../../core/roles/gateway/contract/system.js';
import { definePlugin } from '../../core/runtime/plugin-host.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import { resolveWindow, windowMs } from '../../core/interfaces/time-params.js';

export { ERROR_LOG_CAPACITY };
/** Most text the log holds (messages, paths, names, addresses), in UTF-16 code units; the oldest entries go first. */
export const ERROR_LOG_MAX_BYTES = 2 * 1024 * 1024;
/** Longest message kept per entry; longer ones are cut with an ellipsis. */
export const ERROR_LOG_MESSAGE_MAX_CHARS = 1024;
/** What an entry costs beyond its text: the numbers and the object itself. */
const ENTRY_OVERHEAD = 64;

export interface ErrorLogEntry {
  /** Unix milliseconds. */
  time: number;
  path: string;
  errorCode: number;
  errorName: string;
  errorMsg: string;
  user: string | null;
  sourceIp: string | null;
  /** Only on calls relayed from a cloud: the id the cloud's request carried. */
  correlationId?: string;
}

/** The size an entry counts against ERROR_LOG_MAX_BYTES. */
function entrySize(e: ErrorLogEntry): number {
  return ENTRY_OVERHEAD + e.path.length + e.errorName.length + e.errorMsg.length + (e.user?.length ?? 0) + (e.sourceIp?.length ?? 0) + (e.correlationId?.length ?? 0);
}

/** A ring of the newest entries, bounded by count and by size, oldest first when read. */
export class ErrorLog {
  private readonly entries: (ErrorLogEntry | undefined)[];
  private next = 0;
  private size = 0;
  private bytes = 0;

  constructor(
    private readonly capacity = ERROR_LOG_CAPACITY,
    private readonly maxBytes = ERROR_LOG_MAX_BYTES,
  ) {
    this.entries = new Array<ErrorLogEntry | undefined>(capacity);
  }

  /** Size of the entries held, as counted against the byte bound. */
  get heldBytes(): number {
    return this.bytes;
  }

  /** Entries held. */
  get length(): number {
    return this.size;
  }

  add(raw: ErrorLogEntry): void {
    const entry =
      raw.errorMsg.length > ERROR_LOG_MESSAGE_MAX_CHARS ? { ...raw, errorMsg: `${raw.errorMsg.slice(0, ERROR_LOG_MESSAGE_MAX_CHARS)}…` } : raw;
    if (this.size === this.capacity) this.dropOldest();
    this.entries[this.next] = entry;
    this.next = (this.next + 1) % this.capacity;
    this.size++;
    this.bytes += entrySize(entry);
    while (this.bytes > this.maxBytes && this.size > 1) this.dropOldest();
  }

  private dropOldest(): void {
    const index = (this.next - this.size + this.capacity) % this.capacity;
    const oldest = this.entries[index];
    if (oldest) this.bytes -= entrySize(oldest);
    this.entries[index] = undefined;
    this.size--;
  }

  /** Entries with fromMs <= time <= toMs, oldest first. */
  between(fromMs: number, toMs: number): ErrorLogEntry[] {
    const out: ErrorLogEntry[] = [];
    for (let i = 0; i < this.size; i++) {
      const e = this.entries[(this.next - this.size + i + this.capacity) % this.capacity];
      if (e && e.time >= fromMs && e.time <= toMs) out.push(e);
    }
    return out;
  }
}

export const errorLogPlugin = definePlugin<GatewayContext>({
  name: 'error-log',
  register(ctx) {
    const log = new ErrorLog();
    ctx.interfaces.onError(({ path, error, ctx: call, at }) => {
      log.add({
        time: at,
        path,
        errorCode: error.errorCode,
        errorName: error.errorName,
        errorMsg: error.message,
        user: call.principal.username,
        sourceIp: call.sourceIp ?? null,
        ...(call.correlationId !== undefined ? { correlationId: call.correlationId } : {}),
      });
    });
    ctx.interfaces.implement(SYSTEM.errorLog, {
      handler: ({ start, end, limit }) => {
        const now = ctx.now();
        // Without a start: since the gateway started (the log holds nothing older), at least one second back.
        const window = resolveWindow({ start, end }, { timeZone: ctx.timeZone, now, defaultStart: Math.min(ctx.startedAt, now - 1000) });
        const { startMs, endMs } = windowMs(window);
        // [start, end); without an end, everything up to this moment, including the current second.
        const rows = log.between(startMs, end === undefined ? Infinity : endMs - 1);
        const data = limit === 0 ? rows : rows.slice(-limit);
        return { window, total: rows.length, returned: data.length, truncated: data.length < rows.length, data };
      },
    });
  },
});
