/**
 * The shape of each family's value as the conformance suite checks it at run
 * time: the contract's schemas (core/roles/gateway/contract/family-values.ts,
 * kept equal to core/driver-seam/driver.ts `FamilyValues` there), with the one rule
 * across fields that every driver must also keep.
 */
import type { ReadableFamily } from '../../../core/driver-seam/driver.js';
import { FAMILY_VALUES } from '../../../core/roles/gateway/contract/family-values.js';

export const FAMILY_SHAPES = {
  ...FAMILY_VALUES,
  // An engaged emergency stop reads the same through every driver (docs/derived-states.md, "Emergency stop").
  status: FAMILY_VALUES.status.refine((s) => !s.emergency || (s.adjustedStatus === 'EMERGENCY' && s.alarmLevel === 'emergency' && s.alarmStatus), {
    error: 'an engaged emergency stop must read adjustedStatus EMERGENCY, alarmLevel emergency and alarmStatus true',
  }),
};

/** Every family a client can be asked to read. */
export const READABLE_FAMILIES = Object.keys(FAMILY_SHAPES) as ReadableFamily[];
