/**
 * JSON request bodies, read the same way on every HTTP surface (the
 * gateway's /api and /mcp, the program service's /api/v1, the cloud's
 * /mcp): the nesting depth checked on the raw text (core/http/json-depth.ts),
 * then fastify's secure parser (`__proto__` and `constructor.prototype`
 * refused), then every string and field name checked to be well-formed
 * Unicode (core/values/well-formed.ts). A refusal is a JsonBodyError (400), which
 * each surface answers in its own format, naming the field.
 *
 * Query strings and path parameters need no such check: their
 * percent-decoding reads UTF-8 and refuses the encoded surrogates
 * (`%ED%A0%80`): a query value keeps its text undecoded, a path is refused
 * as an invalid URL (test/plugins/ill-formed-input.test.ts).
 */
import type { FastifyInstance } from 'fastify';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from './json-depth.js';
import { findIllFormed, illFormedLine, type IllFormedAt } from '../values/well-formed.js';

/** Why a body was refused: nested too deep, not JSON (or unsafe keys), or a string that is not well-formed Unicode. */
export type JsonBodyProblem = 'depth' | 'syntax' | 'ill-formed';

export class JsonBodyError extends Error {
  readonly statusCode = 400;

  constructor(
    readonly problem: JsonBodyProblem,
    message: string,
    /** For `ill-formed`: where the string is. */
    readonly at?: IllFormedAt,
    /** For `ill-formed`: the parsed body, for a surface that answers with parts of it (a JSON-RPC id). */
    readonly body?: unknown,
  ) {
    super(message);
    this.name = 'JsonBodyError';
  }
}

export const DEPTH_ACCEPTED = `at most ${MAX_JSON_DEPTH} levels of arrays and objects`;

/**
 * Replaces `app`'s JSON parser. `emptyBody: 'undefined'` takes an empty
 * body as no body (clients often send the JSON content type on every
 * request); otherwise it is refused as not JSON.
 */
export function installJsonBodyParser(app: FastifyInstance, options: { emptyBody?: 'undefined' | 'refused' } = {}): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (options.emptyBody === 'undefined' && text.trim() === '') {
      done(null, undefined);
      return;
    }
    if (exceedsJsonDepth(text)) {
      done(new JsonBodyError('depth', `JSON nested deeper than ${MAX_JSON_DEPTH} levels; accepted: ${DEPTH_ACCEPTED}`), undefined);
      return;
    }
    parseJson(request, text, (err, value) => {
      if (err) {
        done(new JsonBodyError('syntax', err.message), undefined);
        return;
      }
      const at = findIllFormed(value);
      if (at) done(new JsonBodyError('ill-formed', illFormedLine(at), at, value), undefined);
      else done(null, value);
    });
  });
}
