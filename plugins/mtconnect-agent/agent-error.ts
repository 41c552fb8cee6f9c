/**
 * The MTConnect errors the agent answers with (an MTConnectError document,
 * documents-xml.ts / documents-json.ts), each with the HTTP status
 * MTConnect 2.x agents give it: 400 for a request the agent refuses, 404 for
 * a device, asset or path that is not there, 405 for a method it does not
 * offer, 500 for its own failure.
 */

/** Each error's element name (MTConnect 2.6+), its errorCode and HTTP status. */
export const AGENT_ERRORS = {
  OutOfRange: { code: 'OUT_OF_RANGE', status: 400 },
  InvalidRequest: { code: 'INVALID_REQUEST', status: 400 },
  InvalidParameterValue: { code: 'INVALID_PARAMETER_VALUE', status: 400 },
  InvalidQueryParameter: { code: 'INVALID_QUERY_PARAMETER', status: 400 },
  InvalidXPath: { code: 'INVALID_XPATH', status: 400 },
  NoDevice: { code: 'NO_DEVICE', status: 404 },
  AssetNotFound: { code: 'ASSET_NOT_FOUND', status: 404 },
  InvalidURI: { code: 'INVALID_URI', status: 404 },
  Unsupported: { code: 'UNSUPPORTED', status: 405 },
  InternalError: { code: 'INTERNAL_ERROR', status: 500 },
} as const;
export type AgentErrorKind = keyof typeof AGENT_ERRORS;

/** The query parameter an OutOfRange or InvalidParameterValue names, with the range or form it must have. */
export interface QueryParameterFacts {
  name: string;
  value: string;
  minimum?: number;
  maximum?: number;
  type?: string;
  format?: string;
}

/** Characters of client text an error quotes at most. */
const QUOTE_MAX = 120;

/** Client text as an error quotes it: bounded, so a long or hostile value does not come back whole. */
export function quoted(text: string): string {
  return text.length > QUOTE_MAX ? `${text.slice(0, QUOTE_MAX)}…` : text;
}

/** A refused request, answered as an MTConnectError document. */
export class AgentError extends Error {
  readonly errorCode: string;
  readonly status: number;

  constructor(
    readonly kind: AgentErrorKind,
    message: string,
    readonly queryParameter?: QueryParameterFacts,
    readonly assetId?: string,
  ) {
    super(message);
    this.name = 'AgentError';
    this.errorCode = AGENT_ERRORS[kind].code;
    this.status = AGENT_ERRORS[kind].status;
  }
}

/** OUT_OF_RANGE for `name`, which must lie in [min, max] (cppagent's wording). */
export function outOfRange(name: string, value: number, min: number, max: number): AgentError {
  const message = value < min ? `'${name}' must be greater than ${min - 1}` : `'${name}' must be less than ${max + 1}`;
  return new AgentError('OutOfRange', message, { name, value: String(value), minimum: min, maximum: max });
}
