/**
 * An in-process MQTT broker (aedes over a TCP or TLS server) that can be
 * stopped hard and started again on the same port: the cloud role's embedded
 * broker, the simulator's broker and the tests' peer. Stopping destroys every
 * client socket, as a broker crash would. aedes speaks MQTT 3.1.1 (it has no
 * MQTT 5).
 */
import type { Server, Socket } from 'node:net';
import type { Aedes, AuthenticateError, Client } from 'aedes';

/** Decides a client's credentials; `clientKey` is what authorizePublish/Subscribe later receive for it. */
export type BrokerAuthenticate = (username: string | undefined, password: string | undefined) => boolean | Promise<boolean>;
/** Whether the client authenticated as `username` may publish to / subscribe to `topic`. */
export type BrokerAuthorize = (username: string | undefined, topic: string) => boolean;

export interface InProcessBrokerOptions {
  /** Interface to listen on; 127.0.0.1 unless told otherwise. */
  host?: string;
  /** Port to listen on; 0 lets the OS choose, and restarts reuse the chosen port. */
  port?: number;
  /** Accepted username → password; without it every client is accepted. */
  users?: Readonly<Record<string, string>>;
  /** Serve MQTT over TLS (mqtts) with this PEM key and certificate. */
  tls?: { key: string | Buffer; cert: string | Buffer };
  /** Decides credentials (instead of `users`). */
  authenticate?: BrokerAuthenticate;
  /**
   * The one client id a client that authenticated as `username` may use:
   * any other (an empty one too) is refused with CONNACK 2, identifier
   * rejected, before the session of that id is touched, so no credentials
   * can take over another client's session (or set off its will).
   */
  clientIdOf?: (username: string) => string;
  /** Topic rules per user name; without them every client may publish and subscribe anywhere. */
  authorizePublish?: BrokerAuthorize;
  authorizeSubscribe?: BrokerAuthorize;
}

const usernameOf = new WeakMap<Client, string | undefined>();

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

  /** Whether the broker's listener accepts connections now. */
  get listening(): boolean {
    return this.server?.listening ?? false;
  }

  /** Starts the broker (a fresh one: no retained messages or sessions survive a stop). */
  async start(): Promise<void> {
    if (this.server) return;
    const { Aedes } = await import('aedes');
    const users = this.options.users;
    const decide: BrokerAuthenticate | undefined =
      this.options.authenticate ??
      (users ? (username, password) => username !== undefined && users[username] !== undefined && password === users[username] : undefined);
    const { authorizePublish, authorizeSubscribe, clientIdOf } = this.options;
    const aedes = await Aedes.createBroker({
      ...(decide
        ? {
            authenticate: (client: Client, username: string | undefined, password: Buffer | undefined, done: (error: AuthenticateError | null, success: boolean | null) => void) => {
              // aedes authenticates before it looks for a session of the same client id (and takes it over).
              void Promise.resolve(decide(username, password?.toString('utf8'))).catch(() => false).then((ok) => {
                // MQTT 3.1.1 CONNACK return codes: 4 bad user name or password, 2 identifier rejected.
                if (!ok) return done(Object.assign(new Error('bad user name or password'), { returnCode: 4 }) as AuthenticateError, false);
                if (clientIdOf && (username === undefined || client.id !== clientIdOf(username))) {
                  return done(Object.assign(new Error('identifier rejected: this client id belongs to other credentials'), { returnCode: 2 }) as AuthenticateError, false);
                }
                usernameOf.set(client, username);
                done(null, true);
              });
            },
          }
        : {}),
      ...(authorizePublish
        ? {
            authorizePublish: (client: Client | null, packet: { topic: string }, done: (error?: Error | null) => void) => {
              // Messages the broker itself publishes (a client's will has a client) carry no client.
              if (!client || authorizePublish(usernameOf.get(client), packet.topic)) return done(null);
              done(new Error(`not allowed to publish to ${packet.topic}`));
            },
          }
        : {}),
      ...(authorizeSubscribe
        ? {
            authorizeSubscribe: (client: Client, sub: { topic: string }, done: (error: Error | null, sub?: unknown) => void) => {
              if (authorizeSubscribe(usernameOf.get(client), sub.topic)) return done(null, sub);
              done(new Error(`not allowed to subscribe to ${sub.topic}`));
            },
          }
        : {}),
    } as Parameters<typeof Aedes.createBroker>[0]);
    const onConnection = (socket: Socket) => {
      // Small packets (a request, a PUBACK) go out at once: with Nagle's algorithm against delayed ACKs each hop waits ~40 ms.
      socket.setNoDelay(true);
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

  /** The connected clients: aedes keeps them in `clients` by client id (not in its types). */
  private clients(): Client[] {
    return Object.values((this.aedes as unknown as { clients?: Record<string, Client> } | undefined)?.clients ?? {});
  }

  /**
   * Subscribes inside the broker, without a client connection: `deliver`
   * sees every message published on `filter` (no retained ones: only what
   * is published from now on). Answers the function that unsubscribes.
   */
  async subscribeInProcess(filter: string, deliver: (topic: string, payload: Buffer) => void): Promise<() => Promise<void>> {
    const aedes = this.aedes;
    if (!aedes) throw new Error('the broker is not running');
    const handler = (packet: { topic: string; payload: string | Buffer }, done: () => void) => {
      try {
        deliver(packet.topic, typeof packet.payload === 'string' ? Buffer.from(packet.payload) : packet.payload);
      } finally {
        done();
      }
    };
    await new Promise<void>((resolve) => aedes.subscribe(filter, handler, resolve));
    return () => new Promise<void>((resolve) => (this.aedes === aedes ? aedes.unsubscribe(filter, handler, resolve) : resolve()));
  }

  /** The retained messages on `filter` now (what a new subscriber would get first). */
  async retainedInProcess(filter: string): Promise<{ topic: string; payload: Buffer }[]> {
    const persistence = (this.aedes as unknown as { persistence?: { createRetainedStreamCombi(patterns: string[]): AsyncIterable<{ topic: string; payload: string | Buffer }> } } | undefined)?.persistence;
    if (!persistence) throw new Error('the broker is not running');
    const out: { topic: string; payload: Buffer }[] = [];
    for await (const packet of persistence.createRetainedStreamCombi([filter])) out.push({ topic: packet.topic, payload: typeof packet.payload === 'string' ? Buffer.from(packet.payload) : packet.payload });
    return out;
  }

  /** Publishes from inside the broker (no client, so no publish rule applies), to every subscriber of `topic`; with `retain`, kept (an empty payload removes the retained message). */
  publishInProcess(topic: string, payload: Buffer | string, qos: 0 | 1 = 1, retain = false): Promise<void> {
    const aedes = this.aedes;
    if (!aedes) return Promise.reject(new Error('the broker is not running'));
    return new Promise<void>((resolve, reject) =>
      aedes.publish({ cmd: 'publish', topic, payload: typeof payload === 'string' ? Buffer.from(payload) : payload, qos, retain, dup: false }, (err) => (err ? reject(err) : resolve())),
    );
  }

  /** User names of the connected clients that authenticated with one (each once). */
  connectedUsers(): string[] {
    const names = new Set<string>();
    for (const client of this.clients()) {
      const name = usernameOf.get(client);
      if (name !== undefined) names.add(name);
    }
    return [...names];
  }

  /** Closes the connections of the clients that authenticated as `username` (their wills are published); how many. */
  disconnectUser(username: string): number {
    let closed = 0;
    for (const client of this.clients()) {
      if (usernameOf.get(client) !== username) continue;
      client.close();
      closed++;
    }
    return closed;
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
