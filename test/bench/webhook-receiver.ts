/**
 * A webhook receiver in its own process (a receiver is another system: its
 * work must not count as the service's). Prints `port <n>` once listening,
 * then `<deploymentId> <unix ms>` for every event it receives, answering 204.
 */
import { createServer } from 'node:http';

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = Date.now();
    try {
      const event = JSON.parse(Buffer.concat(chunks).toString()) as { data?: { deploymentId?: string } };
      if (event.data?.deploymentId) process.stdout.write(`${event.data.deploymentId} ${at}\n`);
    } catch {
      // not an event: ignored
    }
    res.writeHead(204).end();
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`port ${(server.address() as { port: number }).port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
