import type { Subscription } from '../../resources/subscriptions/subscription.js';
import { tsOpt, ts } from './time.js';

export function subscriptionV2(s: Subscription) {
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
    },
  };
}
