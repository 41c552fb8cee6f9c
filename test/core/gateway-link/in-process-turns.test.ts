/**
 * The in-process link lets the event loop turn during a long run of calls: a
 * gateway in the same process answers without I/O, and without turns a batch
 * of deployments would hold the loop until its end, so the service could not
 * store states, fire webhooks or answer requests meanwhile.
 */
import { describe, expect, it } from 'vitest';
import { InProcessGatewayLink } from '../../../core/gateway-link/in-process.js';
import type { InterfaceRegistry } from '../../../core/interfaces/registry.js';

/** A registry whose every call keeps the thread busy for `ms` and answers a program upload. */
function busyRegistry(ms: number): InterfaceRegistry {
  return {
    call: async () => {
      const end = performance.now() + ms;
      while (performance.now() < end) {
        // busy, as a gateway decoding and hashing a large program is
      }
      return { ok: true, data: { size: 1, sha256: 'a'.repeat(64) } };
    },
  } as unknown as InterfaceRegistry;
}

describe('in-process gateway link', () => {
  it('PV-24 a long run of calls lets the event loop turn between them, so the service goes on storing states and answering', async () => {
    const link = new InProcessGatewayLink(busyRegistry(2));
    let turnedAfter: number | undefined;
    let done = 0;
    setImmediate(() => (turnedAfter = done));
    for (let i = 0; i < 20; i++) {
      await link.uploadProgram('M1', '//CNC_MEM/USER/PATH1/', 'O1000', Buffer.from('%\nM30\n%\n'));
      done++;
    }
    // 20 calls of 2 ms each: the loop turned within the first few, not after the last.
    expect(turnedAfter).toBeDefined();
    expect(turnedAfter as number).toBeLessThan(10);
  });
});
