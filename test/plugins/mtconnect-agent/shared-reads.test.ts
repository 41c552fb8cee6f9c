import { describe, expect, it } from 'vitest';
import { SharedReads } from '../../../plugins/mtconnect-agent/shared-reads.js';

describe('reads shared between streams', () => {
  it('streams asking the same thing up to the same head share one read; a new head or another question reads again', async () => {
    const shared = new SharedReads<string>(4);
    let reads = 0;
    const read = (answer: string) => () => {
      reads++;
      return Promise.resolve(answer);
    };
    const [a, b] = await Promise.all([shared.get('xml from 100', 7, read('first')), shared.get('xml from 100', 7, read('second'))]);
    expect([a, b, reads]).toEqual(['first', 'first', 1]);
    expect(await shared.get('json from 100', 7, read('json'))).toBe('json');
    expect(reads).toBe(2);
    expect(await shared.get('xml from 100', 8, read('later'))).toBe('later');
    expect(reads).toBe(3);
  });

  it('a refused read reaches every stream sharing it and is not kept for the next', async () => {
    const shared = new SharedReads<string>(4);
    const refused = shared.get('k', 1, () => Promise.reject(new Error('OUT_OF_RANGE')));
    const sharing = shared.get('k', 1, () => Promise.resolve('not read'));
    await expect(refused).rejects.toThrow('OUT_OF_RANGE');
    await expect(sharing).rejects.toThrow('OUT_OF_RANGE');
    expect(await shared.get('k', 1, () => Promise.resolve('again'))).toBe('again');
  });

  it('beyond the kept number a read is made for its stream alone', async () => {
    const shared = new SharedReads<number>(1);
    let reads = 0;
    const read = () => Promise.resolve(++reads);
    await shared.get('a', 1, read);
    await shared.get('b', 1, read);
    await shared.get('b', 1, read);
    expect(reads).toBe(3);
    expect(await shared.get('a', 1, read)).toBe(1);
  });
});
