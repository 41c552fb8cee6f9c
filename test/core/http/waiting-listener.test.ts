/** The listener a role answers its probes on while it waits for its database (core/http/waiting-listener.ts). */
import { request } from 'node:http';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { Readiness } from '../../../core/runtime/health.js';
import { WaitingListener } from '../../../core/http/waiting-listener.js';

const listeners: WaitingListener[] = [];
afterEach(async () => {
  for (const l of listeners.splice(0)) await l.close();
});

/** One GET on a keep-alive connection: the status, the Connection header and whether the server closed the socket after it. */
function get(url: string): Promise<{ status: number | undefined; connection: string | undefined; closedByServer: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { connection: 'keep-alive' } }, (res) => {
      res.resume();
      res.on('end', () => {
        const socket = req.socket as NonNullable<typeof req.socket>;
        const done = (closedByServer: boolean) => resolve({ status: res.statusCode, connection: res.headers.connection, closedByServer });
        if (socket.destroyed || socket.readableEnded) return done(true);
        const timer = setTimeout(() => (socket.destroy(), done(false)), 1000);
        socket.once('close', () => (clearTimeout(timer), done(true)));
      });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the waiting listener', () => {
  it('closes the connection of every answer, probes included, so that no client holds one to it when the role\'s app takes its port over', async () => {
    const waiting = new WaitingListener(new Readiness(pino({ level: 'silent' })), undefined);
    listeners.push(waiting);
    const base = await waiting.open('127.0.0.1', 0);
    for (const path of ['/healthz', '/readyz', '/api/v1/libraries']) {
      const answer = await get(`${base}${path}`);
      expect({ path, ...answer }).toMatchObject({ path, connection: 'close', closedByServer: true });
    }
  });
});
