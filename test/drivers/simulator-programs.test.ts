/**
 * The simulator's program settings: the directory a machine keeps its programs
 * in (`programDir`, the vendor's by default) and `runsLastProgram`, which makes
 * the last program file written to the machine the one it runs.
 */
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { SimulatorClient, simulatorDriver, type SimulatorOptionsInput } from '../../drivers/simulator/index.js';

const T0 = Date.UTC(2025, 0, 6, 6, 0, 0);

async function connected(options: SimulatorOptionsInput): Promise<{ clock: { now: number }; client: SimulatorClient }> {
  const clock = { now: T0 };
  const client = simulatorDriver.create(
    { machineID: 'SIM-P', ip: '127.0.0.1', port: 0, driverOptions: simulatorDriver.configSchema.parse(options) },
    { logger: pino({ level: 'silent' }), dataDir: '/tmp', now: () => clock.now },
  );
  if (!(client instanceof SimulatorClient)) throw new Error('simulatorDriver.create must build a SimulatorClient');
  await client.connect();
  return { clock, client };
}

describe('simulator program settings', () => {
  it('keeps its programs in the vendor\'s directory unless programDir names another', async () => {
    const siemens = await connected({ system: 'SIEMENS', seed: 3 });
    expect((await siemens.client.read('programList')).map((f) => f.dir)).toEqual(expect.arrayContaining(['/_N_MPF_DIR/']));
    const named = await connected({ system: 'SIEMENS', seed: 3, programDir: '/_N_WKS_DIR/_N_FLANGE_WPD' });
    const files = await named.client.read('programList');
    expect(files.length).toBeGreaterThan(0);
    expect(new Set(files.map((f) => f.dir))).toEqual(new Set(['/_N_WKS_DIR/_N_FLANGE_WPD/']));
    expect((await named.client.read('currentProgram')).dir).toBe('/_N_WKS_DIR/_N_FLANGE_WPD/');
  });

  it('refuses a programDir that is empty, has control characters or climbs out with ..', () => {
    for (const programDir of ['', 'A\u0001/', '//CNC_MEM/../X/']) {
      const parsed = simulatorDriver.configSchema.safeParse({ programDir });
      expect(parsed.success).toBe(false);
      expect(JSON.stringify(parsed.error?.issues)).toContain('programDir');
    }
    expect(simulatorDriver.configSchema.safeParse({ runsLastProgram: 'yes' }).error?.issues[0]?.message).toBe('runsLastProgram must be true or false');
  });

  it('with runsLastProgram, runs the last program file written to it, byte for byte, and its status names it', async () => {
    const { clock, client } = await connected({ system: 'FANUC', seed: 11, runsLastProgram: true });
    const before = await client.read('currentProgram');
    expect(before.name).toMatch(/^O1\d{3}$/);
    const first = Buffer.from('%\r\nO4711 (\xd8 25 SCHAFTFR\xc4SER)\r\nG90\r\nM30\r\n%\x14\r\n', 'latin1');
    await client.uploadProgram('//CNC_MEM/USER/PATH1/', 'O4711', first);
    const second = Buffer.from('%\nO4712\nM30\n%\n');
    await client.uploadProgram('//CNC_MEM/USER/PATH1', 'O4712', second);
    clock.now += 7_000;
    let current = await client.read('currentProgram');
    expect(current).toMatchObject({ dir: '//CNC_MEM/USER/PATH1/', name: 'O4712' });
    expect(current.content.equals(second)).toBe(true);
    expect((await client.read('status')).program).toBe('O4712');
    expect(current.block).toBeGreaterThanOrEqual(1);
    expect(current.block).toBeLessThanOrEqual(5);
    // Written again, the earlier program runs, as it now stands.
    await client.uploadProgram('//CNC_MEM/USER/PATH1/', 'O4711', first);
    current = await client.read('currentProgram');
    expect(current.name).toBe('O4711');
    expect(current.content.equals(first)).toBe(true);
  });

  it('without runsLastProgram, a written program is stored but the schedule\'s program keeps running', async () => {
    const { client } = await connected({ system: 'FANUC', seed: 11 });
    const before = await client.read('currentProgram');
    await client.uploadProgram('//CNC_MEM/USER/PATH1/', 'O4711', Buffer.from('%\nO4711\nM30\n%\n'));
    expect((await client.read('currentProgram')).name).toBe(before.name);
  });
});
