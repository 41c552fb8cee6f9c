/**
 * The one error table. Every errorCode the gateway can answer is listed here
 * with its name, HTTP status, description and the hint an operator or an AI
 * agent needs to recover. HTTP bodies are `{errorCode, errorMsg}`; MCP tool
 * errors are rendered from the same entries.
 */

interface ErrorEntry {
  code: number;
  /** HTTP status. Information-level errors answer 200 with a non-zero errorCode. */
  http: number;
  description: string;
  hint: string;
}

export const ERRORS = {
  OK: { code: 0, http: 200, description: 'Success.', hint: '' },
  UNKNOWN_ERROR: {
    code: 1,
    http: 500,
    description: 'Internal error.',
    hint: 'Retry; if it persists, read the gateway log for the request time.',
  },
  INVALID_PARAMETER: {
    code: 2,
    http: 400,
    description: 'Invalid parameter.',
    hint: 'Correct the named field; the message lists the accepted values.',
  },
  UNAUTHORIZED: {
    code: 3,
    http: 401,
    description: 'Missing or invalid credentials.',
    hint: 'Send Authorization: Bearer <JWT or secret key>; get a JWT from POST /api/auth/login.',
  },
  TOKEN_INVALID: {
    code: 4,
    http: 401,
    description: 'Invalid or expired credentials.',
    hint: 'Log in again (POST /api/auth/login) for a new JWT, or ask an administrator for a valid secret key.',
  },
  FORBIDDEN: {
    code: 5,
    http: 403,
    description: 'Not authorised for this interface.',
    hint: 'Ask an administrator to add this interface path to your authorised API list.',
  },
  NOT_FOUND: {
    code: 6,
    http: 404,
    description: 'No such interface.',
    hint: 'See docs/api.md for the interface paths.',
  },
  IP_NOT_IN_WHITE_LIST: {
    code: 7,
    http: 401,
    description: 'IP not in white list.',
    hint: 'Ask an administrator to add your source address to ipWhiteList.',
  },
  TOO_MANY_REQUESTS: {
    code: 8,
    http: 429,
    description: 'Too many requests.',
    hint: 'Wait for the Retry-After interval, then try again.',
  },
  SERVICE_STOPPING: {
    code: 9,
    http: 503,
    description: 'The gateway is shutting down.',
    hint: 'Retry once the gateway is back.',
  },
  PASSWORD_MISMATCH: {
    code: 10,
    http: 401,
    description: 'Wrong username or password.',
    hint: 'Check the credentials; repeated failures are throttled.',
  },
  WEAK_PASSWORD: {
    code: 11,
    http: 400,
    description: 'Password too weak.',
    hint: 'Use at least 10 characters.',
  },
  USER_EXISTED: {
    code: 12,
    http: 409,
    description: 'Username already exists.',
    hint: 'Choose another username, or update the existing user.',
  },
  USER_NOT_EXISTED: {
    code: 13,
    http: 404,
    description: 'Unknown username.',
    hint: 'List the users with GET /api/security/users.',
  },
  SECRET_KEY_NOT_EXISTED: {
    code: 14,
    http: 404,
    description: 'Unknown secret key.',
    hint: 'List the keys with GET /api/security/secret-keys.',
  },
  BODY_TOO_LARGE: {
    code: 15,
    http: 413,
    description: 'Request body too large.',
    hint: 'Send a smaller body; docs/api.md lists the body limit of each interface.',
  },
  TASK_NOT_ENABLED: {
    code: 1301,
    http: 200,
    description: 'The task for this data class is not enabled.',
    hint: 'Enable the task for the machine (tasks.<class>.enabled) or pick a class that is enabled.',
  },
  TASK_NOT_READY: {
    code: 1303,
    http: 200,
    description: 'Task data not ready.',
    hint: 'The first sample has not been taken yet; retry after one sampling interval.',
  },
  DRIVER_FAMILY_UNSUPPORTED: {
    code: 2001,
    http: 200,
    description: 'The machine driver does not support this item.',
    hint: "Read another item; the machine's driver lists the families it supports.",
  },
  MACHINE_NOT_CONNECTED: {
    code: 2002,
    http: 200,
    description: 'The machine is not connected.',
    hint: 'Check get_fleet_status for the connection error; the gateway reconnects by itself.',
  },
  DRIVER_REQUEST_FAILED: {
    code: 2003,
    http: 200,
    description: 'The controller request failed.',
    hint: 'Retry; if it persists, check the machine connection and driver settings.',
  },
  DRIVER_TIMEOUT: {
    code: 2004,
    http: 200,
    description: 'The controller did not answer in time.',
    hint: 'Check the network path to the machine, or raise the driver request timeout.',
  },
  PROGRAM_NOT_FOUND: {
    code: 2005,
    http: 404,
    description: 'No such program file on the machine.',
    hint: 'List the files with readProgramList first.',
  },
  PROGRAM_TRANSFER_SUPERSEDED: {
    code: 2006,
    http: 409,
    description: 'A newer holder transfers this program file.',
    hint: 'The fencing epoch sent is older than one the gateway has seen for this machine file and lease: another holder has the transfer now. Stop; do not retry with this epoch.',
  },
  MACHINE_INACTIVE: {
    code: 10002,
    http: 409,
    description: 'The machine is inactive.',
    hint: 'Activate the machine (isActive: true) first.',
  },
  GENERAL_MACHINE_ID_EXISTED: {
    code: 10001,
    http: 409,
    description: 'machineID already exists.',
    hint: 'Choose another machineID, or update the existing machine.',
  },
  GENERAL_MACHINE_ID_NOT_EXISTED: {
    code: 10003,
    http: 404,
    description: 'Unknown or inactive machineID.',
    hint: 'Call list_machines (GET /api/config/machines) for valid machineIDs.',
  },
  GENERAL_GROUP_ID_EXISTED: {
    code: 10004,
    http: 409,
    description: 'groupID already exists.',
    hint: 'Choose another groupID, or update the existing group.',
  },
  GENERAL_GROUP_ID_NOT_EXISTED: {
    code: 10005,
    http: 404,
    description: 'Unknown groupID.',
    hint: 'Call list_groups (GET /api/config/groups) for valid groupIDs.',
  },
  GATEWAY_SERVICE_UNAVAILABLE: {
    code: 20001,
    http: 503,
    description: 'The gateway is not connected to the cloud platform.',
    hint: 'Check that the gateway is running and reaches the broker; retry later.',
  },
} as const satisfies Record<string, ErrorEntry>;

export type ErrorName = keyof typeof ERRORS;

/** A failure that maps to one entry of the error table. `detail` is safe to show to the caller. */
export class GatewayError extends Error {
  readonly errorName: ErrorName;
  readonly errorCode: number;
  readonly httpStatus: number;
  readonly detail: string | undefined;
  /** For TOO_MANY_REQUESTS: seconds until a retry is accepted (the Retry-After header). */
  readonly retryAfterSec: number | undefined;

  constructor(name: ErrorName, detail?: string, options?: { cause?: unknown; retryAfterSec?: number }) {
    const entry = ERRORS[name];
    super(detail ? `${entry.description} ${detail}` : entry.description, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.retryAfterSec = options?.retryAfterSec;
    this.name = 'GatewayError';
    this.errorName = name;
    this.errorCode = entry.code;
    this.httpStatus = entry.http;
    this.detail = detail;
  }

  get hint(): string {
    return ERRORS[this.errorName].hint;
  }

  /** The HTTP body `{errorCode, errorMsg}`. */
  toBody(): { errorCode: number; errorMsg: string } {
    return { errorCode: this.errorCode, errorMsg: this.message };
  }

  /** The MCP tool error text: `{path} failed: {NAME}({code}) {description}. Hint: {hint}`. */
  toToolMessage(path: string): string {
    const description = this.message.replace(/\.$/, '');
    return `${path} failed: ${this.errorName}(${this.errorCode}) ${description}. Hint: ${this.hint}`;
  }
}

/** The most characters of a client's value an error message repeats. */
export const QUOTE_MAX_CHARS = 64;

/**
 * A client-supplied value as an error message quotes it: in single quotes,
 * cut to QUOTE_MAX_CHARS characters with an ellipsis and the full length, so
 * an answer or a log entry never grows with the input that caused it.
 */
export function quote(value: string): string {
  if (value.length <= QUOTE_MAX_CHARS) return `'${value}'`;
  return `'${value.slice(0, QUOTE_MAX_CHARS)}…' (${value.length} characters)`;
}

/** Client values listed in one message; the rest are counted. */
export const QUOTE_MAX_ITEMS = 5;

/** Several client values, each quoted, at most QUOTE_MAX_ITEMS of them and a count of the rest. */
export function quoteList(values: readonly string[]): string {
  const shown = values.slice(0, QUOTE_MAX_ITEMS).map(quote).join(', ');
  return values.length > QUOTE_MAX_ITEMS ? `${shown} and ${values.length - QUOTE_MAX_ITEMS} more` : shown;
}

/** Turns anything thrown into a GatewayError; unexpected errors become UNKNOWN_ERROR with no internals. */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return new GatewayError('UNKNOWN_ERROR', undefined, { cause: err });
}
