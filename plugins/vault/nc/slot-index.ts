/**
 * The open-addressing index both interning tables use: slot = hash & mask,
 * linear probing, each slot holding id + 1 (0 = empty). The size is a power
 * of two.
 */

/** A fresh slot index of `size` slots for the first `count` ids and their hashes. */
export function buildSlots(hashes: Int32Array, count: number, size: number): Int32Array<ArrayBuffer> {
  const slots = new Int32Array(size);
  const mask = size - 1;
  for (let id = 0; id < count; id++) {
    let slot = (hashes[id] as number) & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = id + 1;
  }
  return slots;
}
