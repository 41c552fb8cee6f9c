/**
 * What the driver knows of one MTConnect device: its data items, each with
 * the MTConnect type, subType and category that say what it measures, and
 * the component it belongs to. It comes from an agent's /probe, from a
 * Devices file given for an adapter, or from the mapping table of names
 * (docs/drivers/mtconnect.md), and the families are read through it.
 */

export const CATEGORIES = ['SAMPLE', 'EVENT', 'CONDITION'] as const;
export type Category = (typeof CATEGORIES)[number];

export interface DataItem {
  id: string;
  name?: string;
  /** MTConnect type, e.g. EXECUTION, PART_COUNT, SYSTEM. */
  type: string;
  subType?: string;
  category: Category;
  /** VALUE unless the probe says TIME_SERIES, DATA_SET or TABLE. */
  representation?: string;
  units?: string;
  /** The component the data item belongs to: its element (Controller, Path, Linear, …) and name. */
  component: { type: string; id?: string; name?: string };
  /** The `<Source>` of the data item: another key an adapter may send it under. */
  source?: string;
}

export interface DeviceModel {
  name: string;
  uuid?: string;
  dataItems: readonly DataItem[];
}

/** A data item found by any of the keys an adapter may send it under: id, name or source. */
export class DataItemIndex {
  private readonly byKey = new Map<string, DataItem>();

  constructor(readonly model: DeviceModel) {
    // Ids first: an id wins over another item's name, as in the reference agent.
    for (const item of model.dataItems) this.byKey.set(item.id, item);
    for (const item of model.dataItems) {
      for (const key of [item.name, item.source]) if (key !== undefined && !this.byKey.has(key)) this.byKey.set(key, item);
    }
  }

  find(key: string): DataItem | undefined {
    return this.byKey.get(key);
  }

  get size(): number {
    return this.model.dataItems.length;
  }
}

/** MTConnect's UPPER_SNAKE type as the element name of its observation: PART_COUNT → PartCount. */
export function elementNameOf(type: string): string {
  return type
    .toLowerCase()
    .split('_')
    .map((part) => (part ? part[0]!.toUpperCase() + part.slice(1) : ''))
    .join('');
}

/** An observation element's name back to the MTConnect type: PartCount → PART_COUNT. */
export function typeOfElement(element: string): string {
  return element.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}
