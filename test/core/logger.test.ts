import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { createLogger } from '../../core/logger.js';

describe('logger', () => {
  it('GW-14 credentials never reach the log, wherever they appear in a record', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger('info', sink);
    logger.info({ password: 'p1-secret', machine: { fileServerPassword: 'p2-secret', accessToken: 'p3-secret' }, req: { headers: { authorization: 'Bearer p4-secret' } } }, 'x');
    logger.info({ body: { currentPassword: 'p5-secret', newPassword: 'p6-secret' }, token: 'p7-secret' }, 'y');
    const text = lines.join('');
    expect(text).not.toMatch(/p\d-secret/);
    expect(text.match(/\[redacted\]/g)?.length).toBe(7);
  });
});
