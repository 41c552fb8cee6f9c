/**
 * What a gateway's errors mean to a link's caller: the errorCode of an
 * answer (core/interfaces/errors.ts is the table) as a GatewayLinkFailure. Shared by
 * both implementations, so they cannot disagree on error meaning.
 */
import { GatewayLinkError, type GatewayLinkFailure } from './types.js';

/** errorCode → what a caller can do about it (core/interfaces/errors.ts is the table). */
const FAILURE_BY_CODE: Record<number, GatewayLinkFailure> = {
  2: 'rejected', 11: 'rejected', 15: 'rejected',
  3: 'unauthorized', 4: 'unauthorized', 5: 'unauthorized', 7: 'unauthorized',
  6: 'not-found', 13: 'not-found', 2005: 'not-found', 10003: 'not-found', 10005: 'not-found',
  2001: 'unsupported',
  2006: 'superseded',
  2002: 'machine-unavailable', 2004: 'machine-unavailable', 10002: 'machine-unavailable',
  8: 'unreachable', 9: 'unreachable', 20001: 'unreachable',
};

/** Characters of a gateway's message kept in a link error. */
const MESSAGE_MAX = 300;

/** The link error for a gateway's errorCode and message; the message is cut to MESSAGE_MAX characters. */
export function linkError(errorCode: number, message: string): GatewayLinkError {
  const text = message.length > MESSAGE_MAX ? `${message.slice(0, MESSAGE_MAX)}…` : message;
  return new GatewayLinkError(FAILURE_BY_CODE[errorCode] ?? 'failed', text, errorCode);
}
