/**
 * The MTConnect agent's documents checked by Debian's xmllint (libxml2-utils)
 * against the 2.7 schemas: a second validator beside the xmllint-wasm of the
 * unit tests, run as a separate program on the documents as a client gets them.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_DIR, SCHEMAS, type DocumentKind } from '../fixtures/mtconnect/validate.js';
import { startAgent, untilMachinesReported, type TestAgent } from '../plugins/mtconnect-agent/agent-fixture.js';

const run = promisify(execFile);
let agent: TestAgent;
const dir = mkdtempSync(join(tmpdir(), 'mtc-xmllint-'));

beforeAll(async () => {
  agent = await startAgent();
  await untilMachinesReported(agent);
  const now = Date.now();
  await agent.write([{ machineID: 'M01', cls: 'AlarmLog', ts: now, data: { event: 'start', code: '77', message: 'COOLANT', level: 'warning', since: now } }]);
}, 60_000);

afterAll(async () => {
  await agent?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** xmllint's verdict on the document at `path` as a `kind` document: its exit code and what it printed. */
async function xmllint(kind: DocumentKind, path: string): Promise<{ code: number; output: string }> {
  const res = await agent.get(path);
  const file = join(dir, `${kind}-${Math.random().toString(36).slice(2)}.xml`);
  writeFileSync(file, res.body);
  try {
    const { stderr } = await run('xmllint', ['--noout', '--schema', join(SCHEMA_DIR, SCHEMAS[kind]), file]);
    return { code: 0, output: stderr };
  } catch (err) {
    const e = err as { code?: number; stderr?: string };
    return { code: e.code ?? -1, output: e.stderr ?? '' };
  }
}

describe('MTConnect documents against the 2.7 schemas with Debian xmllint', () => {
  it('every kind of document validates', { timeout: 120_000 }, async () => {
    const cases: [DocumentKind, string][] = [
      ['Devices', '/probe'],
      ['Streams', '/current'],
      ['Streams', '/sample?count=500'],
      ['Assets', '/assets'],
      ['Error', '/sample?from=1'],
      ['Error', '/NOPE/current'],
      ['Error', '/current?path=//Nothing'],
    ];
    for (const [kind, path] of cases) {
      const verdict = await xmllint(kind, path);
      expect(verdict.output, path).toMatch(/validates/);
      expect(verdict.code, `${path}: ${verdict.output}`).toBe(0);
    }
  });

  it('a document the schema refuses is refused: xmllint is really checking', async () => {
    const res = await agent.get('/current');
    const file = join(dir, 'broken.xml');
    writeFileSync(file, res.body.replace(/<Execution ([^>]*)>[^<]*<\/Execution>/, '<Execution $1>SPINNING</Execution>'));
    const failed = await run('xmllint', ['--noout', '--schema', join(SCHEMA_DIR, SCHEMAS.Streams), file]).then(
      () => 0,
      (err: { code?: number }) => err.code ?? -1,
    );
    expect(failed).not.toBe(0);
  });
});
