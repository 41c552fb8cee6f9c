/** The latest values a source delivered: conditions kept as the reference agent keeps them, and the bounds on what is kept. */
import { describe, expect, it } from 'vitest';
import { ObservationStore } from '../../../drivers/mtconnect/observations.js';
import { parseAssets } from '../../../drivers/mtconnect/assets.js';

const T = 1_800_000_000_000;
const codes = (store: ObservationStore, id = 'system') => [...(store.condition(id)?.active.keys() ?? [])];

describe('MTConnect observation store', () => {
  it('keeps a condition\'s entries by native code: NORMAL with a code clears it, without one clears all, UNAVAILABLE clears and marks it unknown', () => {
    const store = new ObservationStore({ maxActiveConditionsPerItem: 10, maxAssets: 10 });
    store.setCondition('system', { level: 'FAULT', nativeCode: '1', message: 'a' }, T);
    store.setCondition('system', { level: 'WARNING', nativeCode: '2', message: 'b' }, T + 1);
    expect(codes(store)).toEqual(['1', '2']);
    store.setCondition('system', { level: 'NORMAL', nativeCode: '1' }, T + 2);
    expect(codes(store)).toEqual(['2']);
    store.setCondition('system', { level: 'FAULT', nativeCode: '3' }, T + 3);
    store.setCondition('system', { level: 'NORMAL' }, T + 4);
    expect(codes(store)).toEqual([]);
    store.setCondition('system', { level: 'FAULT', nativeCode: '4' }, T + 5);
    store.setCondition('system', { level: 'UNAVAILABLE' }, T + 6);
    expect(store.condition('system')).toMatchObject({ unavailable: true, active: new Map() });
  });

  it('keeps when an entry became active at its level, through repeats of the same level', () => {
    const store = new ObservationStore({ maxActiveConditionsPerItem: 10, maxAssets: 10 });
    store.setCondition('system', { level: 'WARNING', nativeCode: '7' }, T);
    store.setCondition('system', { level: 'WARNING', nativeCode: '7', message: 'again' }, T + 100);
    expect(store.condition('system')?.active.get('7')).toMatchObject({ since: T, message: 'again' });
    store.setCondition('system', { level: 'FAULT', nativeCode: '7' }, T + 200);
    expect(store.condition('system')?.active.get('7')).toMatchObject({ since: T + 200, level: 'FAULT' });
  });

  it('refuses a new entry past maxActiveConditionsPerItem, still takes changes to those it holds, and a new one once one cleared', () => {
    const store = new ObservationStore({ maxActiveConditionsPerItem: 2, maxAssets: 10 });
    expect(store.setCondition('system', { level: 'FAULT', nativeCode: '1' }, T)).toBe(true);
    expect(store.setCondition('system', { level: 'FAULT', nativeCode: '2' }, T)).toBe(true);
    expect(store.setCondition('system', { level: 'FAULT', nativeCode: '3' }, T)).toBe(false);
    expect(store.setCondition('system', { level: 'WARNING', nativeCode: '2' }, T)).toBe(true);
    store.setCondition('system', { level: 'NORMAL', nativeCode: '1' }, T);
    expect(store.setCondition('system', { level: 'FAULT', nativeCode: '3' }, T)).toBe(true);
    expect(codes(store)).toEqual(['2', '3']);
  });

  it('keeps at most maxAssets assets, replaces a known one, and drops removed ones', () => {
    const store = new ObservationStore({ maxActiveConditionsPerItem: 2, maxAssets: 2 });
    const asset = (id: string, removed = false) => {
      const doc = parseAssets(`<CuttingTool assetId="${id}"${removed ? ' removed="true"' : ''}><CuttingToolLifeCycle><ToolLife type="MINUTES" limit="10">1</ToolLife><ProgramToolNumber>${id.slice(1)}</ProgramToolNumber></CuttingToolLifeCycle></CuttingTool>`);
      if (doc.kind !== 'assets' || !doc.assets[0]) throw new Error('expected an asset');
      return doc.assets[0];
    };
    expect([store.putAsset(asset('T1'), T), store.putAsset(asset('T2'), T), store.putAsset(asset('T3'), T)]).toEqual([true, true, false]);
    expect(store.putAsset(asset('T2'), T)).toBe(true);
    expect(store.toolLife().map((t) => t.toolNum)).toEqual([1, 2]);
    store.putAsset(asset('T1', true), T);
    expect(store.toolLife().map((t) => t.toolNum)).toEqual([2]);
    store.removeAllAssets('CuttingTool');
    expect(store.assetCount).toBe(0);
  });
});
