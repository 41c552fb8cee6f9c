/**
 * A real Mosquitto broker as a child process, for the peer tests: a
 * generated config in a temp dir (127.0.0.1 only, optionally a password file
 * made with mosquitto_passwd that can grow while it runs, an ACL file and
 * listener options), killed with SIGKILL (or, keeping its sessions, stopped
 * with SIGTERM) and started again on the same port.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { BrokerController, BrokerKind } from '../drivers/mqtt/broker-controller.js';
import { freePort } from '../fixtures/free-port.js';

const INSTALL_HINT = 'install the Debian package `mosquitto` (apt-get install mosquitto) to run the MQTT peer tests';

/** The mosquitto executable, or an error telling how to install it. */
export function mosquittoPath(): string {
  for (const candidate of ['/usr/sbin/mosquitto', '/usr/bin/mosquitto', '/usr/local/sbin/mosquitto']) if (existsSync(candidate)) return candidate;
  throw new Error(`mosquitto not found; ${INSTALL_HINT}`);
}

function ctrlTool(): string {
  for (const candidate of ['/usr/bin/mosquitto_ctrl', '/usr/sbin/mosquitto_ctrl', '/usr/local/bin/mosquitto_ctrl']) if (existsSync(candidate)) return candidate;
  throw new Error(`mosquitto_ctrl not found; ${INSTALL_HINT}`);
}

/** Mosquitto's dynamic security plugin, where Debian's package puts it. */
function dynamicSecurityPlugin(): string {
  for (const candidate of ['/usr/lib/x86_64-linux-gnu/mosquitto_dynamic_security.so', '/usr/lib/aarch64-linux-gnu/mosquitto_dynamic_security.so', '/usr/lib/mosquitto_dynamic_security.so']) {
    if (existsSync(candidate)) return candidate;
  }
  throw new Error(`mosquitto_dynamic_security.so not found; ${INSTALL_HINT}`);
}

function passwdTool(): string {
  for (const candidate of ['/usr/bin/mosquitto_passwd', '/usr/sbin/mosquitto_passwd', '/usr/local/bin/mosquitto_passwd']) if (existsSync(candidate)) return candidate;
  throw new Error(`mosquitto_passwd not found; ${INSTALL_HINT}`);
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function waitUntilListening(port: number, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null) throw new Error(`mosquitto exited with ${child.exitCode}: ${stderr()}`);
    if (Date.now() > deadline) throw new Error(`mosquitto did not listen on ${port} within 5 s: ${stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export interface MosquittoOptions {
  /** Only these credentials are accepted (a password file); `{}` accepts none until addUser. */
  users?: Record<string, string>;
  /** The text of an ACL file (acl_file). */
  acl?: string;
  /** Lines for the listener (after its `listener` line), e.g. `use_username_as_clientid true`. */
  listenerLines?: readonly string[];
  /**
   * The dynamic security plugin, initialised with this admin client (mosquitto_ctrl dynsec init),
   * as its documentation sets it up; no password file or ACL file then.
   */
  dynamicSecurity?: { adminUsername: string; adminPassword: string };
  /**
   * Keep persistent sessions and their queued messages across a restart:
   * persistence in the broker's directory, and `stop` ends the broker with
   * SIGTERM so that it writes them out (SIGKILL otherwise).
   */
  persistence?: boolean;
  /** Lines of the broker's own options (before any listener), e.g. `max_packet_size 2048`. */
  brokerLines?: readonly string[];
}

/** A Mosquitto whose password file can grow while it runs. */
export interface MosquittoController extends BrokerController {
  /** Adds (or changes) a user in the password file and makes the broker reload it (SIGHUP), as an operator would. */
  addUser(username: string, password: string): void;
}

/** Starts Mosquitto on 127.0.0.1 and a free port with the given users, ACL and listener options. */
export async function startMosquitto(options: MosquittoOptions = {}): Promise<MosquittoController> {
  const executable = mosquittoPath();
  const dir = mkdtempSync(join(tmpdir(), 'mosquitto-'));
  const port = await freePort();
  const passwords = join(dir, 'passwords');
  const lines = [
    'per_listener_settings false',
    `allow_anonymous ${options.users || options.dynamicSecurity ? 'false' : 'true'}`,
    ...(options.persistence ? ['persistence true', `persistence_location ${dir}/`, 'max_queued_messages 1000000'] : ['persistence false']),
    // As docs/cloud-relay.md advises: small packets go out at once.
    'set_tcp_nodelay true',
    // Started as root, Mosquitto would switch to its own user, which cannot read this temp dir.
    `user ${userInfo().username}`,
    'log_dest stderr',
    'log_type error',
  ];
  if (options.users) {
    writeFileSync(passwords, '');
    for (const [user, password] of Object.entries(options.users)) execFileSync(passwdTool(), ['-b', passwords, user, password], { stdio: 'ignore' });
    lines.push(`password_file ${passwords}`);
  }
  if (options.dynamicSecurity) {
    const file = join(dir, 'dynamic-security.json');
    execFileSync(ctrlTool(), ['dynsec', 'init', file, options.dynamicSecurity.adminUsername, options.dynamicSecurity.adminPassword], { stdio: 'ignore' });
    lines.push(`plugin ${dynamicSecurityPlugin()}`, `plugin_opt_config_file ${file}`);
  }
  if (options.acl !== undefined) {
    const acl = join(dir, 'acl');
    writeFileSync(acl, options.acl);
    lines.push(`acl_file ${acl}`);
  }
  lines.push(...(options.brokerLines ?? []), `listener ${port} 127.0.0.1`, ...(options.listenerLines ?? []));
  const config = join(dir, 'mosquitto.conf');
  writeFileSync(config, `${lines.join('\n')}\n`);

  let child: ChildProcess | undefined;
  let startedAt = 0;
  const start = async () => {
    if (child) return;
    let errors = '';
    const spawned = spawn(executable, ['-c', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    spawned.stderr?.on('data', (chunk: Buffer) => {
      errors += chunk.toString('utf8');
    });
    child = spawned;
    startedAt = Date.now();
    await waitUntilListening(port, spawned, () => errors);
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = once(running, 'exit');
    running.kill(options.persistence ? 'SIGTERM' : 'SIGKILL');
    await exited;
  };
  await start();
  return {
    host: '127.0.0.1',
    port,
    url: `mqtt://127.0.0.1:${port}`,
    get startedAt() {
      return startedAt;
    },
    start,
    stop,
    addUser(username, password) {
      if (!options.users) throw new Error('this Mosquitto accepts anyone: start it with users to add one');
      execFileSync(passwdTool(), ['-b', passwords, username, password], { stdio: 'ignore' });
      child?.kill('SIGHUP');
    },
  };
}

export const mosquittoBrokers: BrokerKind = {
  name: 'mosquitto',
  protocolVersions: [4, 5],
  start: (options = {}) => startMosquitto(options),
};
