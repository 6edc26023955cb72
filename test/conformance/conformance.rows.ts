/** Every group of the conformance table, in the order docs/conformance.md lists them. */
import type { RowGroup } from './conformance.types.js';
import { FIXES } from './fixes.rows.js';

/** The groups. */
export const GROUPS: RowGroup[] = [FIXES];
