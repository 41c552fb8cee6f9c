/**
 * The gateways' broker users on an external Mosquitto, kept by the cloud
 * through Mosquitto's dynamic security plugin: commands published as JSON to
 * `$CONTROL/dynamic-security/v1`, answers read from its `/response` topic
 * (https://mosquitto.org/documentation/dynamic-security/). Nobody edits a
 * password or ACL file.
 *
 * Every gateway gets one broker client whose user name is its token id and
 * whose password is its whole token, with a role of its own whose ACLs name
 * its topics literally, so each gateway reaches its own topics only (the
 * plugin of Mosquitto 2.0 does not substitute `%u` in a role's ACLs, as an
 * acl_file pattern does, so one shared role cannot say "its own"). The cloud
 * marks the clients and roles it makes (their text name), and touches only
 * those: broker clients it did not make are left alone. Deleting a client
 * ends its connection at once, without its last will.
 */
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';

export const DYNSEC_TOPIC = '$CONTROL/dynamic-security/v1';
export const DYNSEC_RESPONSE_TOPIC = `${DYNSEC_TOPIC}/response`;
/** The text name of the clients the cloud makes; others are never touched. */
export const GATEWAY_CLIENT_MARK = 'cncgw gateway token';
/** How long one round of commands may take before it fails. */
const COMMAND_TIMEOUT_MS = 10_000;

export interface DynamicSecurityOptions {
  /** The broker, e.g. mqtts://broker.plant:8883. */
  url: string;
  /**
   * The cloud's own broker admin client (one with the dynamic security admin
   * role), used by nothing else: with use_username_as_clientid, a second
   * connection of the same user takes this one's session over.
   */
  username: string;
  password: string;
  /** The relay's topic prefix (cncgw/v1). */
  topicPrefix: string;
  /** The start of each gateway's role name, before its token id; `cncgw-gateway-` unless told. */
  rolePrefix?: string;
  /** Extra connection options (TLS: ca, a client certificate and key, rejectUnauthorized). */
  connect?: Pick<IClientOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized' | 'servername'>;
}

/** A command the broker refused, with its own words. */
export class DynamicSecurityError extends Error {
  constructor(readonly command: string, readonly brokerError: string) {
    super(`the broker's dynamic security refused ${command}: ${brokerError}`);
    this.name = 'DynamicSecurityError';
  }
}

type Command = { command: string } & Record<string, unknown>;
interface Response { command: string; error?: string; data?: Record<string, unknown>; correlationData?: string }

/** The ACLs of one gateway's role: its presence and answers out, its requests in (docs/cloud-relay.md, "Topics"). */
export function gatewayAcls(prefix: string, tokenId: string): { acltype: string; topic: string; allow: boolean }[] {
  return [
    { acltype: 'publishClientSend', topic: `${prefix}/gateways/${tokenId}/presence`, allow: true },
    { acltype: 'publishClientSend', topic: `${prefix}/clouds/+/responses/${tokenId}`, allow: true },
    { acltype: 'subscribeLiteral', topic: `${prefix}/gateways/${tokenId}/requests`, allow: true },
    { acltype: 'publishClientReceive', topic: `${prefix}/gateways/${tokenId}/requests`, allow: true },
  ];
}

export class MosquittoDynamicSecurity {
  private readonly pending = new Map<string, { resolve: (r: Response[]) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  private next = 0;
  private readonly rolePrefix: string;

  private constructor(private readonly client: MqttClient, private readonly options: DynamicSecurityOptions) {
    this.rolePrefix = options.rolePrefix ?? 'cncgw-gateway-';
    client.on('message', (topic, payload) => {
      if (topic === DYNSEC_RESPONSE_TOPIC) this.answered(payload);
    });
    // A new session after a lost connection has no subscription: take the answers again.
    client.on('connect', (connack) => {
      if (!connack.sessionPresent) client.subscribe(DYNSEC_RESPONSE_TOPIC, { qos: 1 });
    });
  }

  /** Connects as the cloud's admin client and subscribes to the answers. */
  static async connect(options: DynamicSecurityOptions): Promise<MosquittoDynamicSecurity> {
    const client = await mqtt.connectAsync(options.url, {
      username: options.username, password: options.password, clientId: `${options.username}-dynsec-${process.pid}`,
      protocolVersion: 5, reconnectPeriod: 1000, connectTimeout: COMMAND_TIMEOUT_MS, ...options.connect,
    });
    await client.subscribeAsync(DYNSEC_RESPONSE_TOPIC, { qos: 1 });
    return new MosquittoDynamicSecurity(client, options);
  }

  private answered(payload: Buffer): void {
    let responses: Response[];
    try {
      responses = (JSON.parse(payload.toString('utf8')) as { responses?: Response[] }).responses ?? [];
    } catch {
      return;
    }
    const id = responses[0]?.correlationData?.split(':')[0];
    const waiting = id === undefined ? undefined : this.pending.get(id);
    if (!waiting) return;
    this.pending.delete(id as string);
    clearTimeout(waiting.timer);
    waiting.resolve(responses);
  }

  /** Sends commands in one message; each answer in order. A refused command is kept as its `error`. */
  async send(commands: readonly Command[]): Promise<Response[]> {
    // Not queued for later: a command the broker runs after its caller gave up would change the broker behind its back.
    if (!this.client.connected) throw new Error(`the broker's dynamic security cannot be reached: the cloud's admin client is not connected to ${this.options.url} (it keeps reconnecting)`);
    const id = `${process.pid}-${++this.next}`;
    const tagged = commands.map((c, i) => ({ ...c, correlationData: `${id}:${i}` }));
    const answered = new Promise<Response[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`the broker's dynamic security did not answer ${commands.map((c) => c.command).join(', ')} within ${COMMAND_TIMEOUT_MS / 1000} s: is the plugin loaded and this client in its admin role?`));
      }, COMMAND_TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer });
    });
    // The answer, the timeout or a failed publish, whichever comes first (a publish cut off by a lost connection may never settle).
    this.client.publishAsync(DYNSEC_TOPIC, JSON.stringify({ commands: tagged }), { qos: 1 }).catch((err: Error) => {
      const waiting = this.pending.get(id);
      if (!waiting) return;
      this.pending.delete(id);
      clearTimeout(waiting.timer);
      waiting.reject(new Error(`the broker's dynamic security commands could not be sent: ${err.message}`));
    });
    return answered;
  }

  /** Sends commands and throws on the first refused one, except the errors listed as harmless. */
  private async run(commands: readonly Command[], harmless: RegExp = /$^/): Promise<Response[]> {
    const responses = await this.send(commands);
    for (const r of responses) if (r.error && !harmless.test(r.error)) throw new DynamicSecurityError(r.command, r.error);
    return responses;
  }

  /** The role of the gateway of `tokenId`. */
  roleOf(tokenId: string): string {
    return `${this.rolePrefix}${tokenId}`;
  }

  /**
   * Adds the broker client of a gateway token (user = token id, password =
   * the whole token) with its role; an existing one gets this password.
   */
  async addGateway(tokenId: string, token: string): Promise<void> {
    const rolename = this.roleOf(tokenId);
    const responses = await this.run([
      { command: 'createRole', rolename, textname: GATEWAY_CLIENT_MARK },
      ...gatewayAcls(this.options.topicPrefix, tokenId).map((acl) => ({ command: 'addRoleACL', rolename, ...acl })),
      { command: 'createClient', username: tokenId, password: token, textname: GATEWAY_CLIENT_MARK, roles: [{ rolename }] },
    ], /already exists/i);
    if (responses.at(-1)?.error) await this.run([{ command: 'setClientPassword', username: tokenId, password: token }]);
  }

  /** Removes a gateway token's broker client and role, ending its connection; one that is gone already is fine. */
  async removeGateway(tokenId: string): Promise<void> {
    await this.run([{ command: 'deleteClient', username: tokenId }, { command: 'deleteRole', rolename: this.roleOf(tokenId) }], /not found/i);
  }

  /** The user names of the broker clients this cloud made (marked), with none of the others. */
  async gatewayClients(): Promise<string[]> {
    const [listed] = await this.run([{ command: 'listClients', verbose: true, count: -1, offset: 0 }]);
    const clients = (listed?.data?.clients ?? []) as { username: string; textname?: string }[];
    return clients.filter((c) => c.textname === GATEWAY_CLIENT_MARK).map((c) => c.username);
  }

  async close(): Promise<void> {
    for (const [id, waiting] of this.pending) {
      clearTimeout(waiting.timer);
      waiting.reject(new Error('closed'));
      this.pending.delete(id);
    }
    await this.client.endAsync();
  }
}
