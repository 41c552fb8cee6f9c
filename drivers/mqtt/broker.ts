/**
 * An in-process MQTT broker (aedes over a TCP or TLS server) that can be
 * stopped hard and started again on the same port: the simulator's broker
 * and the tests' peer. Stopping destroys every client socket, as a broker
 * crash would.
 */
import type { Server, Socket } from 'node:net';
import type { Aedes, AuthenticateError } from 'aedes';

export interface InProcessBrokerOptions {
  /** Interface to listen on; 127.0.0.1 unless told otherwise. */
  host?: string;
  /** Port to listen on; 0 lets the OS choose, and restarts reuse the chosen port. */
  port?: number;
  /** Accepted username → password; without it every client is accepted. */
  users?: Readonly<Record<string, string>>;
  /** Serve MQTT over TLS (mqtts) with this PEM key and certificate. */
  tls?: { key: string | Buffer; cert: string | Buffer };
}

export class InProcessBroker {
  readonly host: string;
  /** The port listened on; fixed after the first start. */
  port: number;
  private aedes: Aedes | undefined;
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly options: InProcessBrokerOptions = {}) {
    this.host = options.host ?? '127.0.0.1';
    this.port = options.port ?? 0;
  }

  get url(): string {
    return `${this.options.tls ? 'mqtts' : 'mqtt'}://${this.host}:${this.port}`;
  }

  get running(): boolean {
    return this.server !== undefined;
  }

  /** Starts the broker (a fresh one: no retained messages or sessions survive a stop). */
  async start(): Promise<void> {
    if (this.server) return;
    const { Aedes } = await import('aedes');
    const users = this.options.users;
    const aedes = await Aedes.createBroker(
      users
        ? {
            authenticate: (_client, username, password, done) => {
              const expected = username === undefined ? undefined : users[username];
              if (expected !== undefined && password?.toString('utf8') === expected) return done(null, true);
              // 4: bad user name or password (MQTT 3.1.1 CONNACK return code; aedes maps it for MQTT 5).
              done(Object.assign(new Error('bad user name or password'), { returnCode: 4 }) as AuthenticateError, false);
            },
          }
        : {},
    );
    const onConnection = (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    };
    const net = await import('node:net');
    const tls = await import('node:tls');
    const server = this.options.tls
      ? tls.createServer({ key: this.options.tls.key, cert: this.options.tls.cert }, (socket) => aedes.handle(socket))
      : net.createServer((socket) => aedes.handle(socket));
    server.on('connection', onConnection);
    // A client that breaks off a TLS handshake must not take the broker down.
    server.on('tlsClientError', () => undefined);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(this.port, this.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (error) {
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      throw error;
    }
    const address = server.address();
    if (address && typeof address === 'object') this.port = address.port;
    this.aedes = aedes;
    this.server = server;
  }

  /** Stops hard: every client socket is destroyed, then the server and broker close. Safe to call twice. */
  async stop(): Promise<void> {
    const { server, aedes } = this;
    this.server = undefined;
    this.aedes = undefined;
    if (!server) return;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await new Promise<void>((resolve) => aedes?.close(() => resolve()) ?? resolve());
  }
}

/** Starts an in-process broker on options.host/port. */
export async function startMqttBroker(options: InProcessBrokerOptions = {}): Promise<InProcessBroker> {
  const broker = new InProcessBroker(options);
  await broker.start();
  return broker;
}
