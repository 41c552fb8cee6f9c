/** The gateway's logger: pino JSON lines, with credentials redacted wherever they might appear. */
import { pino, type DestinationStream, type Logger } from 'pino';

/** Paths pino censors in every log record. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  'password',
  'newPassword',
  'currentPassword',
  'fileServerPassword',
  'accessToken',
  'token',
  'key',
  '*.password',
  '*.newPassword',
  '*.currentPassword',
  '*.fileServerPassword',
  '*.accessToken',
  '*.authorization',
  '*.token',
];

/** A logger writing to stdout, or to `destination` (tests). */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}
