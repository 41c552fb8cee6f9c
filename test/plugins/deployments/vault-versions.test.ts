import { describe, expect, it } from 'vitest';
import type { ProgramsContext } from '../../../core/roles/programs/context.js';
import { VaultVersions } from '../../../plugins/deployments/vault-version.js';
import type { DeploymentRow } from '../../../plugins/deployments/store.js';

/** A vault whose identity look-ups are counted, the program's name changeable, and a failure on demand. */
function vault() {
  const state = { calls: 0, name: 'O1001', fail: false, now: 0 };
  const ctx = {
    now: () => state.now,
    services: {
      find: () => ({
        identity: async (versionId: string) => {
          state.calls++;
          if (state.fail) throw new Error('database unavailable');
          return { program: state.name, number: 3, sha256: `sha-of-${versionId}` };
        },
      }),
    },
  } as unknown as Pick<ProgramsContext, 'services' | 'now'>;
  return { state, versions: new VaultVersions(ctx) };
}
const row = (versionId: string | null) => ({ versionId }) as DeploymentRow;

describe('the vault version a deployment names in its upload', () => {
  it('PV-33 is looked up once for the deployments of a batch that start together, and again later, so a renamed program is named anew', async () => {
    const { state, versions } = vault();
    const batch = await Promise.all(Array.from({ length: 50 }, () => versions.of(row('v1'))));
    expect(state.calls).toBe(1);
    expect(new Set(batch.map((v) => JSON.stringify(v)))).toEqual(new Set([JSON.stringify({ program: 'O1001', version: 3, sha256: 'sha-of-v1' })]));
    await versions.of(row('v2'));
    expect(state.calls).toBe(2);
    state.name = 'O1001-renamed';
    state.now = 5000;
    expect((await versions.of(row('v1')))?.program).toBe('O1001-renamed');
    expect(state.calls).toBe(3);
    expect(await versions.of(row(null))).toBeUndefined();
    expect(state.calls).toBe(3);
  });

  it('a failed look-up is not kept: the next deployment asks the vault again', async () => {
    const { state, versions } = vault();
    state.fail = true;
    await expect(versions.of(row('v1'))).rejects.toThrow('database unavailable');
    state.fail = false;
    expect((await versions.of(row('v1')))?.sha256).toBe('sha-of-v1');
    expect(state.calls).toBe(2);
  });
});
