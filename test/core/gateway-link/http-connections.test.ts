/**
 * The HTTP gateway link's connections: kept alive and reused between calls,
 * at most SOCKETS_PER_GATEWAY to one gateway however many calls are made at
 * once, and a call that gets no answer in time is unreachable. The gateway
 * here is a plain HTTP server answering the groups interface's envelope, so
 * that the test sees every connection the link opens.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpGatewayLink, SOCKETS_PER_GATEWAY } from '../../../core/gateway-link/http.js';
import { GatewayLinkError } from '../../../core/gateway-link/types.js';
import { until } from '../../fixtures/until.js';

describe('HTTP gateway link connections', () => {
  let server: Server;
  let url: string;
  let connections = 0;
  /** Answers held back while `holding` (to see how many calls are in flight at once). */
  const held: ServerResponse[] = [];
  let holding = false;
  let silent = false;
  let inFlight = 0;
  let mostInFlight = 0;

  const answer = (res: ServerResponse) => {
    inFlight--;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ errorCode: 0, errorMsg: '', data: [] }));
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      if (silent) return;
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      if (holding) held.push(res);
      else answer(res);
    });
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('calls one after another reuse one kept-alive connection, also across links to the same gateway', async () => {
    const before = connections;
    for (let i = 0; i < 5; i++) expect(await new HttpGatewayLink(url, 'key').listGroups()).toEqual([]);
    expect(connections - before).toBe(1);
  });

  it('many calls at once to one gateway use at most SOCKETS_PER_GATEWAY connections; the rest wait their turn and are all answered', async () => {
    const link = new HttpGatewayLink(url, 'key');
    holding = true;
    mostInFlight = 0;
    const calls = Array.from({ length: SOCKETS_PER_GATEWAY * 3 }, () => link.listGroups());
    await until('the connections filled', () => held.length, (n) => n === SOCKETS_PER_GATEWAY);
    // Give the waiting calls every chance to open more connections than allowed.
    await new Promise((r) => setTimeout(r, 200));
    expect(held.length).toBe(SOCKETS_PER_GATEWAY);
    holding = false;
    for (const res of held.splice(0)) answer(res);
    expect(await Promise.all(calls)).toEqual(calls.map(() => []));
    expect(mostInFlight).toBe(SOCKETS_PER_GATEWAY);
  });

  it('a call without an answer within its timeout is unreachable (transient), naming the timeout', async () => {
    silent = true;
    try {
      const err = await new HttpGatewayLink(url, 'key', { timeoutMs: 300 }).listGroups().then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(GatewayLinkError);
      expect((err as GatewayLinkError).kind).toBe('unreachable');
      expect((err as GatewayLinkError).message).toContain('no answer within 300 ms');
    } finally {
      silent = false;
    }
  });
});
