/**
 * TLS for a role's HTTP listener: a certificate and key pair read from PEM
 * files, checked before anything listens (each file readable and of the
 * right kind, the key the certificate's own: otherwise a TlsError naming the
 * path), served by fastify's `https` option, and reloaded without a restart
 * when either file changes (a watch on their directories, which also sees an
 * atomic rename or a symlink swap as certbot and Kubernetes secrets do) or
 * on SIGHUP. A reload that fails (a half-written file, a mismatched pair)
 * keeps the pair being served and logs why; connections already open keep
 * the context they began with. docs/operations.md, "TLS".
 */
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import type { Server as TlsServer } from 'node:tls';
import type { Logger } from 'pino';
import { z } from 'zod';

/** Where a listener's certificate (PEM, the chain after it) and private key (PEM, unencrypted) are. */
export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

/** A role's own pair in its config section (`communication.tls`, `programs.tls`, `cloud.tls`). */
export const tlsFilesSchema = z.object({ certFile: z.string().min(1).max(1024), keyFile: z.string().min(1).max(1024) }).strict();

/**
 * The TLS 1.2 suites a listener offers by default: ECDHE key exchange
 * (forward secrecy) with AEAD ciphers only (AES-GCM, ChaCha20-Poly1305), as
 * Mozilla's "intermediate" profile without the DHE suites; no CBC, no SHA-1,
 * no static RSA key exchange. TLS 1.3's suites are all offered (they are
 * AEAD with forward secrecy by design) and are not set by this string.
 */
export const MODERN_TLS12_CIPHERS = [
  'ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-ECDSA-AES256-GCM-SHA384', 'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305', 'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');

export const TLS_MIN_VERSIONS = ['TLSv1.2', 'TLSv1.3'] as const;

/** Whether OpenSSL takes `ciphers` as a cipher list with at least one suite it knows. */
function isCipherList(ciphers: string): boolean {
  try {
    createSecureContext({ ciphers });
    return true;
  } catch {
    return false;
  }
}

/** The `tls` section: the protocol versions and TLS 1.2 suites every role's listener accepts. */
export const tlsPolicySchema = z
  .strictObject({
    minVersion: z.enum(TLS_MIN_VERSIONS).default('TLSv1.2').describe('the oldest protocol a client may use'),
    ciphers: z
      .string()
      .min(1)
      .max(4096)
      .default(MODERN_TLS12_CIPHERS)
      .refine(isCipherList, 'not an OpenSSL cipher list with a suite this Node.js knows, e.g. ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384')
      .describe('the TLS 1.2 suites, an OpenSSL cipher list'),
  })
  .default({ minVersion: 'TLSv1.2', ciphers: MODERN_TLS12_CIPHERS });

/** What a listener accepts of TLS: the oldest version and the TLS 1.2 suites. */
export type TlsPolicy = z.output<typeof tlsPolicySchema>;

/** The policy of an empty `tls` section. */
export const DEFAULT_TLS_POLICY: TlsPolicy = tlsPolicySchema.parse(undefined);

/** The environment variables naming the pair every role of the process serves unless its section names its own. */
export const TLS_CERT_VARIABLE = 'TLS_CERT_FILE';
export const TLS_KEY_VARIABLE = 'TLS_KEY_FILE';

/**
 * The pair a role serves: the one its config section names, else
 * TLS_CERT_FILE and TLS_KEY_FILE; none (plain HTTP) when neither is given.
 * One variable without the other is refused, naming both.
 */
export function roleTlsFiles(own: TlsFiles | undefined, env: NodeJS.ProcessEnv): TlsFiles | undefined {
  if (own) return own;
  const certFile = env[TLS_CERT_VARIABLE] ?? '';
  const keyFile = env[TLS_KEY_VARIABLE] ?? '';
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile) {
    const [set, unset] = certFile ? [TLS_CERT_VARIABLE, TLS_KEY_VARIABLE] : [TLS_KEY_VARIABLE, TLS_CERT_VARIABLE];
    throw new TlsError(`TLS: ${set} is set but ${unset} is not; set both (a PEM certificate and its key) or neither`);
  }
  return { certFile, keyFile };
}

/** A certificate and key pair as read, for `https.createServer`. */
export interface TlsPair {
  cert: Buffer;
  key: Buffer;
  /** The certificate's last valid moment (ms since the epoch). */
  notAfter: number;
  subject: string;
}

/** The Strict-Transport-Security header sent over TLS: one year, this host only (a plant's other hosts may serve plain HTTP). */
export const HSTS_HEADER = 'max-age=31536000';

/** How long the file watch waits for more changes before it reloads (a renewal writes both files). */
const RELOAD_SETTLE_MS = 250;

/** What a listener's server is built with over TLS. */
export interface TlsServerOptions {
  cert: Buffer;
  key: Buffer;
  minVersion: TlsPolicy['minVersion'];
  ciphers: string;
  honorCipherOrder: boolean;
}

/** A pair that cannot be served; the message names the file. */
export class TlsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TlsError';
  }
}

function readPem(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why = e.code === 'ENOENT' ? 'no such file' : e.code === 'EACCES' ? 'permission denied' : e.code === 'EISDIR' ? 'is a directory' : e.message;
    throw new TlsError(`TLS ${what} file ${file}: cannot be read (${why})`);
  }
}

/** Reads and checks a pair: each file readable, a PEM certificate and a PEM private key, the key the certificate's. */
export function loadTlsPair(files: TlsFiles): TlsPair {
  const certFile = resolve(files.certFile);
  const keyFile = resolve(files.keyFile);
  const cert = readPem(certFile, 'certificate');
  const key = readPem(keyFile, 'key');
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch {
    throw new TlsError(`TLS certificate file ${certFile}: not a PEM certificate (expected -----BEGIN CERTIFICATE-----)`);
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new TlsError(`TLS key file ${keyFile}: not an unencrypted PEM private key (expected -----BEGIN PRIVATE KEY----- or -----BEGIN EC/RSA PRIVATE KEY-----)`);
  }
  if (!x509.checkPrivateKey(privateKey)) {
    throw new TlsError(`TLS key file ${keyFile}: not the private key of the certificate in ${certFile}`);
  }
  return { cert, key, notAfter: Date.parse(x509.validTo), subject: x509.subject.replace(/\n/g, ', ') };
}

/**
 * A listener's pair: loaded (and checked) when made, given to the server
 * when it listens, reloaded on a file change or SIGHUP until closed.
 */
export class TlsSource {
  private pair: TlsPair;
  private readonly policy: TlsPolicy;
  private server: TlsServer | undefined;
  private watchers: FSWatcher[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly onHangup = () => void this.reload('SIGHUP');
  /** Reloads that served a new pair, for tests and the log. */
  reloads = 0;

  private constructor(
    readonly files: TlsFiles,
    private readonly logger: Logger,
    policy: TlsPolicy,
  ) {
    this.pair = loadTlsPair(files);
    this.policy = policy;
  }

  /** Loads the pair now; throws a TlsError naming the file that is wrong. `policy`: the versions and suites offered (the configuration's `tls`). */
  static open(files: TlsFiles, logger: Logger, policy: TlsPolicy = DEFAULT_TLS_POLICY): TlsSource {
    return new TlsSource({ certFile: resolve(files.certFile), keyFile: resolve(files.keyFile) }, logger, policy);
  }

  /** The pair being served. */
  get current(): TlsPair {
    return this.pair;
  }

  /** fastify's `https` option: the pair and the policy (the server prefers its own order of suites). */
  httpsOptions(): TlsServerOptions {
    return { cert: this.pair.cert, key: this.pair.key, ...this.contextOptions() };
  }

  private contextOptions(): Omit<TlsServerOptions, 'cert' | 'key'> {
    return { minVersion: this.policy.minVersion, ciphers: this.policy.ciphers, honorCipherOrder: true };
  }

  /** Starts serving reloads to `server`: watches both files' directories and listens for SIGHUP. */
  attach(server: TlsServer): void {
    this.server = server;
    const dirs = new Map<string, Set<string>>();
    for (const file of [this.files.certFile, this.files.keyFile]) {
      const names = dirs.get(dirname(file)) ?? new Set<string>();
      names.add(basename(file));
      dirs.set(dirname(file), names);
    }
    for (const dir of dirs.keys()) {
      try {
        const watcher = watch(dir, { persistent: false }, () => this.scheduleReload());
        watcher.on('error', (err) => this.logger.warn({ err: err.message, dir }, 'tls: the watch of the certificate directory failed; reload with SIGHUP'));
        this.watchers.push(watcher);
      } catch (err) {
        this.logger.warn({ err: (err as Error).message, dir }, 'tls: cannot watch the certificate directory; reload with SIGHUP');
      }
    }
    process.on('SIGHUP', this.onHangup);
  }

  private scheduleReload(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.reload('file change');
    }, RELOAD_SETTLE_MS);
    this.timer.unref();
  }

  /**
   * Reads the pair again and, when it differs and is valid, serves it to new
   * connections. False when it kept the pair it had (unchanged or invalid).
   */
  reload(cause: string): boolean {
    let next: TlsPair;
    try {
      next = loadTlsPair(this.files);
    } catch (err) {
      this.logger.error({ cause, err: (err as Error).message }, 'tls: the certificate was not reloaded; the previous one is still served');
      return false;
    }
    if (next.cert.equals(this.pair.cert) && next.key.equals(this.pair.key)) return false;
    // A new context replaces the whole one: the policy goes with the new pair.
    this.server?.setSecureContext({ cert: next.cert, key: next.key, ...this.contextOptions() });
    this.pair = next;
    this.reloads++;
    this.logger.info({ cause, subject: next.subject, notAfter: new Date(next.notAfter).toISOString() }, 'tls: certificate reloaded');
    return true;
  }

  /** Stops watching and listening for SIGHUP; safe to call twice. */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const watcher of this.watchers) watcher.close();
    this.watchers = [];
    process.off('SIGHUP', this.onHangup);
    this.server = undefined;
  }
}
