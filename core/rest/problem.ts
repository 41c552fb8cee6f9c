/**
 * RFC 9457 problem documents (`application/problem+json`) for the `/api/v1`
 * surface. RFC 9457 obsoletes RFC 7807 and keeps its members, so a client
 * written for 7807 reads these unchanged. Besides `type`, `title`, `status`,
 * `detail` and `instance`, a problem may carry `errors` (one entry per bad
 * field) and members of its own type (`state` for a lifecycle conflict).
 */

/** One bad field of a request. */
export interface ProblemFieldError {
  /** Where the value was: `body.notes`, `query.limit`, `path.id`, `header.x-on-behalf-of`. */
  field: string;
  /** What is wrong, in one sentence; quotes at most a bounded part of the value. */
  message: string;
  /** What would be accepted, when that can be said briefly (`draft, submitted`, `1..1000`). */
  accepted?: string;
}

/** The problem types of the `/api/v1` surface: slug → HTTP status and title. */
export const PROBLEM_TYPES = {
  'invalid-request': { status: 400, title: 'The request is invalid' },
  unauthenticated: { status: 401, title: 'Authentication is required' },
  'reauthentication-required': { status: 401, title: 'A recent sign-in is required' },
  forbidden: { status: 403, title: 'Not permitted' },
  'operator-required': { status: 403, title: 'This operation needs an operator (X-On-Behalf-Of)' },
  'csrf-check-failed': { status: 403, title: 'Cross-site request refused' },
  'separation-of-duties': { status: 403, title: 'Separation of duties' },
  'beyond-own-rights': { status: 403, title: 'Beyond the caller\'s own rights' },
  'not-found': { status: 404, title: 'Not found' },
  'state-conflict': { status: 409, title: 'Conflicts with the lifecycle state' },
  conflict: { status: 409, title: 'Conflicts with an existing object' },
  'payload-too-large': { status: 413, title: 'The request body is too large' },
  unacceptable: { status: 422, title: 'The request was understood but its content is unacceptable' },
  'too-many-requests': { status: 429, title: 'Too many attempts' },
  'service-unavailable': { status: 503, title: 'The service is temporarily unavailable' },
  'internal-error': { status: 500, title: 'Internal error' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemTypeSlug = keyof typeof PROBLEM_TYPES;

/** The document as sent. */
export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  errors?: ProblemFieldError[];
  [extension: string]: unknown;
}

export interface ProblemOptions {
  errors?: ProblemFieldError[];
  /** Members specific to the problem type, e.g. `{ state: 'published' }`. */
  extensions?: Record<string, unknown>;
  /** Seconds after which a retry may succeed (429, 503). */
  retryAfterSec?: number;
}

/** Thrown by handlers and the surface; answered as a problem document. */
export class ProblemError extends Error {
  readonly status: number;
  readonly title: string;
  readonly errors: ProblemFieldError[] | undefined;
  readonly extensions: Record<string, unknown>;
  readonly retryAfterSec: number | undefined;

  constructor(
    readonly slug: ProblemTypeSlug,
    readonly detail: string,
    options: ProblemOptions = {},
  ) {
    super(detail);
    this.name = 'ProblemError';
    this.status = PROBLEM_TYPES[slug].status;
    this.title = PROBLEM_TYPES[slug].title;
    this.errors = options.errors;
    this.extensions = options.extensions ?? {};
    this.retryAfterSec = options.retryAfterSec;
  }
}
