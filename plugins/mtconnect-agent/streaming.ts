/**
 * Streaming, as the MTConnect standard describes it: one HTTP response of
 * type `multipart/x-mixed-replace`, each part a whole document with its
 * Content-type and Content-length. A sample stream sends `count`
 * observations from `from` at once, part after part while it is behind,
 * then waits for new observations its filter selects (at most `heartbeat`
 * ms: then it sends an empty document as a heartbeat) and sends them no
 * sooner than `interval` ms after the previous part; a stream that falls
 * behind the oldest row the history keeps gets an OUT_OF_RANGE document and
 * ends. A current stream sends /current every `interval` ms. A part waits
 * for the client to take the previous one, so a slow client holds no more
 * than one part in memory.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { AgentError, outOfRange } from './agent-error.js';
import type { Agent, Answer, Format } from './agent.js';
import { byteLength } from './documents.js';
import type { Observation } from './replay.js';

export interface SampleStreamParams {
  from?: number | undefined;
  count: number;
  filter?: Set<string> | undefined;
  interval: number;
  heartbeat: number;
}

/** One streaming response; `close()` ends it (the client left, or the agent stops). */
export class StreamSession {
  private closed = false;
  private readonly boundary = randomBytes(16).toString('hex');
  private wake: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Whether observations the stream selects arrived since its last read began. */
  private unread = false;
  /** Ends the wait for observations, while the stream waits for them. */
  private arrived: (() => void) | undefined;

  constructor(
    private readonly agent: Agent,
    private readonly res: ServerResponse,
    private readonly format: Format,
    private readonly uri: string,
    private readonly onEnd: () => void,
  ) {
    res.on('close', () => this.close());
  }

  /** Writes the response head. */
  begin(): void {
    this.res.writeHead(200, {
      'content-type': `multipart/x-mixed-replace;boundary=${this.boundary}`,
      'cache-control': 'no-cache, no-store, max-age=0',
      expires: '-1',
      connection: 'close',
    });
  }

  /** Sends one part; resolves once the client has taken it (false when the stream closed meanwhile). */
  private async part(answer: Answer): Promise<boolean> {
    if (this.closed) return false;
    const head = `--${this.boundary}\r\nContent-type: ${answer.contentType}\r\nContent-length: ${byteLength(answer.body)}\r\n\r\n`;
    // The body as it is (the same bytes for every stream that asked the same), sent with its head in one write.
    this.res.cork();
    this.res.write(head);
    if (typeof answer.body === 'string') this.res.write(answer.body);
    else for (const chunk of answer.body) this.res.write(chunk);
    const flushed = this.res.write('\r\n');
    this.res.uncork();
    if (!flushed) await new Promise<void>((resolve) => this.waitFor(resolve, (done) => this.res.once('drain', done)));
    return !this.closed;
  }

  /** Waits `ms` (or until closed). */
  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => this.waitFor(resolve, (done) => (this.timer = setTimeout(done, ms))));
  }

  private waitFor(resolve: () => void, arm: (done: () => void) => void): void {
    if (this.closed) return resolve();
    const done = () => {
      if (this.timer) clearTimeout(this.timer);
      this.timer = undefined;
      this.wake = undefined;
      resolve();
    };
    this.wake = done;
    arm(done);
  }

  /** Streams samples until closed. */
  async sample(params: SampleStreamParams): Promise<void> {
    // Followed from before the first read to the end, so no observation lands between a read and the wait after it.
    const stop = this.agent.live.onObservations((observations) => this.observations(observations, params.filter));
    try {
      await this.sampleLoop(params);
    } finally {
      stop();
    }
  }

  private async sampleLoop(params: SampleStreamParams): Promise<void> {
    let from = params.from;
    while (!this.closed) {
      const header = await this.agent.header();
      if (from !== undefined && from < header.firstSequence) return this.fail(outOfRange('from', from, header.firstSequence, header.nextSequence));
      // Cleared just before the read takes its position (synchronously): what arrives from then on is read next time.
      this.unread = false;
      const { answer, header: sent, caughtUp } = await this.agent.streamChunk(this.format, { from, count: params.count, filter: params.filter });
      if (!(await this.part(answer))) return;
      const lastSent = Date.now();
      from = sent.nextSequence;
      if (!caughtUp) {
        await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      const signaled = this.unread || (await this.observed(params.heartbeat));
      if (this.closed) return;
      if (signaled) {
        const wait = params.interval - (Date.now() - lastSent);
        if (wait > 0) await this.sleep(wait);
      }
      // After a heartbeat's silence the next read still starts at `from` (an empty document when nothing came):
      // never a jump past observations, whatever the timing of the commits.
    }
  }

  /** Notes observations the stream's filter selects, and ends a wait for them. */
  private observations(observations: readonly Observation[], filter: Set<string> | undefined): void {
    if (this.unread) return;
    const model = this.agent.model();
    const hit = observations.some((o) => {
      const def = model.byMachine.get(o.machineID)?.[o.item];
      return def !== undefined && (!filter || filter.has(def.id));
    });
    if (!hit) return;
    this.unread = true;
    this.arrived?.();
  }

  /** Resolves true when observations the filter selects arrive, false after `heartbeat` ms without. */
  private observed(heartbeat: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      this.waitFor(
        () => {
          this.arrived = undefined;
          resolve(this.unread);
        },
        (done) => {
          this.timer = setTimeout(done, heartbeat);
          this.arrived = done;
        },
      );
    });
  }

  /** Streams /current every `interval` ms until closed. */
  async current(filter: Set<string> | undefined, interval: number): Promise<void> {
    while (!this.closed) {
      if (!(await this.part(await this.agent.current(this.format, filter, undefined)))) return;
      await this.sleep(interval);
    }
  }

  /** Sends `error` as the last part and ends the stream. */
  private async fail(error: AgentError): Promise<void> {
    await this.part(await this.agent.errorAnswer(this.format, error, this.uri, 'MTConnectStreams'));
    this.close();
  }

  /** Runs `work`; an unexpected failure ends the stream with INTERNAL_ERROR. */
  async run(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      const error = err instanceof AgentError ? err : new AgentError('InternalError', 'The agent could not read the history for this stream');
      await this.fail(error).catch(() => undefined);
    } finally {
      this.close();
    }
  }

  /** Ends the stream; safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.wake?.();
    if (!this.res.writableEnded) this.res.end();
    this.onEnd();
  }
}
