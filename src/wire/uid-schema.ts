import { z } from 'zod';
import { UIDP_PATTERN } from '../core/uidp.js';

/** A uid path on the wire: 40 hex for a root, `/` + 16 hex for each level below. */
export const uidSchema = z.string().regex(UIDP_PATTERN);
