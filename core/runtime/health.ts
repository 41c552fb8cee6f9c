/**
 * Liveness and readiness of a role, with Kubernetes' meanings:
 * - `GET /healthz`: the process lives and its event loop answers (200).
 *   Restart it when this fails.
 * - `GET /readyz`: it can do its job now: 200 when every registered check
 *   passes, else 503. Send it no traffic while this fails; it fails before
 *   the listener is up, and from the moment a stop begins.
 *
 * Both answer without credentials, so they say nothing an attacker could
 * use: `{status}` and, for readiness, each check's name with `ok`,
 * `failing`, or `unavailable` for a peer the role needs that does not
 * answer (its database), with the reason in a few fixed words
 * (`reasons: {"database": "connection refused"}`). No version, no error
 * text, no counts, no addresses; why a check fails goes to the log (at most
 * once per change). A check that throws or takes longer than
 * CHECK_TIMEOUT_MS is failing. docs/operations.md, "Health and readiness".
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Logger } from 'pino';

export const HEALTH_PATH = '/healthz';
export const READY_PATH = '/readyz';

/** A peer the part needs does not answer, and why in a few fixed words (never an address or an error text). */
export interface Unavailable {
  unavailable: string;
}

/** A readiness check: true when the part can do its job, false or Unavailable when it cannot; may throw (failing). */
export type ReadinessCheck = () => boolean | Unavailable | Promise<boolean | Unavailable>;

/** What /readyz says of one check. */
export type CheckState = 'ok' | 'failing' | 'unavailable';

/** How long one check may take before it counts as failing. */
export const CHECK_TIMEOUT_MS = 2000;

/** Check names are short words: they are shown to anyone. */
const CHECK_NAME = /^[a-z][a-z0-9-]{0,31}$/;

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, CheckState>;
  /** Why each `unavailable` check is (present only when one is). */
  reasons?: Record<string, string>;
}

/** The checks of one role, registered by its parts (database, listener, drivers, broker, …). */
export class Readiness {
  private readonly checks = new Map<string, ReadinessCheck>();
  private readonly lastFailure = new Map<string, string>();
  private stopping = false;

  constructor(private readonly logger: Logger) {}

  /** Adds (or replaces) the check `name`. */
  add(name: string, check: ReadinessCheck): void {
    if (!CHECK_NAME.test(name)) throw new Error(`readiness check name '${name}' must match ${CHECK_NAME.source}`);
    this.checks.set(name, check);
  }

  names(): readonly string[] {
    return [...this.checks.keys()];
  }

  /** From now on the role is not ready, whatever its checks say (a stop has begun). */
  markStopping(): void {
    this.stopping = true;
  }

  get isStopping(): boolean {
    return this.stopping;
  }

  /** Runs every check at once; each failing one is logged when its cause changes. */
  async report(): Promise<ReadinessReport> {
    const entries = await Promise.all([...this.checks].map(async ([name, check]) => [name, await this.run(name, check)] as const));
    const checks: Record<string, CheckState> = {};
    const reasons: Record<string, string> = {};
    for (const [name, outcome] of entries) {
      if (typeof outcome === 'object') {
        checks[name] = 'unavailable';
        reasons[name] = outcome.unavailable;
      } else checks[name] = outcome ? 'ok' : 'failing';
    }
    if (this.stopping) checks.stopping = 'failing';
    const ready = !this.stopping && entries.every(([, outcome]) => outcome === true);
    return Object.keys(reasons).length ? { ready, checks, reasons } : { ready, checks };
  }

  private async run(name: string, check: ReadinessCheck): Promise<boolean | Unavailable> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
      });
      const outcome = await Promise.race([Promise.resolve().then(check), timeout]);
      this.settle(name, outcome === true ? undefined : outcome === false ? 'reported not ready' : `unavailable: ${outcome.unavailable}`);
      return outcome;
    } catch (err) {
      this.settle(name, (err as Error).message);
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  private settle(name: string, failure: string | undefined): void {
    if (failure === undefined) {
      if (this.lastFailure.delete(name)) this.logger.info({ check: name }, 'readiness: check passes again');
      return;
    }
    if (this.lastFailure.get(name) === failure) return;
    this.lastFailure.set(name, failure);
    this.logger.warn({ check: name, cause: failure }, 'readiness: check failing');
  }
}

/** The body of /readyz for `report`, and its status. */
export function readinessAnswer({ ready, checks, reasons }: ReadinessReport): { status: number; body: Record<string, unknown> } {
  return { status: ready ? 200 : 503, body: { status: ready ? 'ready' : 'not-ready', checks, ...(reasons ? { reasons } : {}) } };
}

function probeReply(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').type('application/json; charset=utf-8').send(JSON.stringify(body));
}

/** Adds `/healthz` and `/readyz` to `app` (GET and HEAD); no hook of the surface authenticates them. */
export function serveProbes(app: FastifyInstance, readiness: Readiness): void {
  app.get(HEALTH_PATH, async (_request, reply) => probeReply(reply, 200, { status: 'ok' }));
  app.get(READY_PATH, async (_request, reply) => {
    const { status, body } = readinessAnswer(await readiness.report());
    return probeReply(reply, status, body);
  });
}
