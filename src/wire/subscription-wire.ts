import { z } from 'zod';
import {
  SUBSCRIPTION_LIST,
  SUBSCRIPTION_TYPE,
  SUBSCRIPTION_UPDATE,
  type Subscription,
} from '../resources/subscriptions/subscription.js';
import { kind } from './kinds.js';
import { timestampSchema, tsOpt, ts } from './time.js';
import { uidSchema } from './uid-schema.js';

const count = z
  .string()
  .regex(/^\d+$/)
  .meta({ description: 'A 64-bit count as a decimal string.' });

export const subscriptionV2Schema = z
  .object({
    uid: uidSchema,
    name: z.string(),
    description: z.string(),
    sink: z.string(),
    types: z.array(z.string()),
    createTime: timestampSchema,
    updateTime: timestampSchema,
    status: z
      .object({
        state: z.enum(['ACTIVE', 'DEAD_LETTER']),
        consecutiveFailures: z.int(),
        lastError: z.string().optional(),
        lastAttemptTime: timestampSchema.optional(),
        lastDeliveryTime: timestampSchema.optional(),
        deadLetterTime: timestampSchema.optional(),
        deliveredCount: count,
        pendingCount: count,
        validation: z.enum(['PENDING', 'ALLOWED', 'REFUSED']).meta({
          description:
            'Whether the sink agreed to this subscription in the CloudEvents webhook validation handshake (an OPTIONS request answered with WebHook-Allowed-Origin). Events are delivered only once ALLOWED; a new sink starts again at PENDING.',
        }),
        validationTime: timestampSchema
          .optional()
          .meta({ description: 'When the sink last answered the handshake.' }),
        allowedRate: z.int().positive().optional().meta({
          description: "The sink's WebHook-Allowed-Rate, in requests per minute; absent: no limit.",
        }),
      })
      .meta({ description: 'Delivery state; output only.' }),
  })
  .meta({ description: 'Delivery of the events of a group and below to a sink (CloudEvents).' });
export type SubscriptionV2 = z.infer<typeof subscriptionV2Schema>;

export function subscriptionV2(s: Subscription): SubscriptionV2 {
  const st = s.status;
  return {
    uid: s.uid,
    name: s.name,
    description: s.description,
    sink: s.sink,
    types: s.types,
    createTime: ts(s.createTime),
    updateTime: ts(s.updateTime),
    status: {
      state: st.state,
      consecutiveFailures: st.consecutiveFailures,
      ...(st.lastError !== null ? { lastError: st.lastError } : {}),
      lastAttemptTime: tsOpt(st.lastAttemptTime),
      lastDeliveryTime: tsOpt(st.lastDeliveryTime),
      deadLetterTime: tsOpt(st.deadLetterTime),
      deliveredCount: st.deliveredCount,
      pendingCount: st.pendingCount,
      validation: st.validation,
      validationTime: tsOpt(st.validationTime),
      ...(st.allowedRate !== null ? { allowedRate: st.allowedRate } : {}),
    },
  };
}

/** Subscriptions' descriptor (wire/kinds.ts), in their feature's `kinds`. */
export const SUBSCRIPTION_KIND = kind({
  type: SUBSCRIPTION_TYPE,
  name: 'Subscription',
  plural: 'subscriptions',
  path: '/events/v2beta1/subscriptions',
  spec: SUBSCRIPTION_LIST,
  wireSchema: subscriptionV2Schema,
  toWire: subscriptionV2,
  outputOnly: SUBSCRIPTION_UPDATE.outputOnly,
});
