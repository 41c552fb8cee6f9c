/**
 * The logger of every role: pino, with credentials redacted wherever they
 * might appear in a record. Where it writes (docs/operations.md, "Logs"):
 *
 * - a terminal: one readable line per event (pino-pretty: time, level,
 *   message, fields), for a person watching `npm start`;
 * - anything else (a pipe, journald, a file redirect, a container log):
 *   one JSON object per line, for a log collector;
 * - with `file`: JSON lines appended to that file (its directory made),
 *   reopened on SIGHUP so logrotate can move it away.
 *
 * Every form is written synchronously, so log lines keep their order with
 * the start-up banner (written with process.stdout.write): a line logged
 * before the banner is printed before it, never in its middle. (pino's
 * default destination buffers and writes later, which put lines logged
 * before the banner inside or after it.)
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { activeTraceIds } from './tracing.js';

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

/** A log file is created readable by the process's user only. */
export const LOG_FILE_MODE = 0o600;

/** Where the log goes when no destination stream is given. */
export interface LogOutput {
  /** Readable lines instead of JSON; by default when stdout is a terminal. */
  pretty?: boolean;
  /** Append JSON lines to this file instead of stdout (reopened on SIGHUP). */
  file?: string;
}

/** The form the log takes on stdout: readable on a terminal, JSON otherwise. */
export function logFormat(output: LogOutput, stdoutIsTTY = process.stdout.isTTY === true): 'pretty' | 'json' | 'file' {
  if (output.file) return 'file';
  return (output.pretty ?? stdoutIsTTY) ? 'pretty' : 'json';
}

function outputStream(output: LogOutput): DestinationStream {
  const form = logFormat(output);
  if (form === 'file') {
    // 0600 like the data files: the log names users, machines and addresses (also the new file after a rotation).
    const destination = pino.destination({ dest: output.file as string, mkdir: true, sync: true, mode: LOG_FILE_MODE });
    process.on('SIGHUP', () => destination.reopen());
    return destination;
  }
  if (form === 'pretty') {
    return pretty({ destination: 1, sync: true, colorize: process.stdout.isTTY === true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
  }
  return pino.destination({ dest: 1, sync: true });
}

/** Adds `trace_id` and `span_id` of the active span to a log line; nothing outside a span. */
const traceMixin = () => activeTraceIds() ?? {};

/**
 * A logger writing to `destination` (tests), or as `output` says (stdout:
 * pretty on a terminal, else JSON). With `traced` (tracing is on) each line
 * logged inside a span carries its `trace_id` and `span_id`.
 */
export function createLogger(level: string, destination?: DestinationStream, output: LogOutput = {}, traced = false): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, ...(traced ? { mixin: traceMixin } : {}) };
  return pino(options, destination ?? outputStream(output));
}
