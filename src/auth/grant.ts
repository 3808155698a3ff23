import type { CompiledCondition } from './condition.js';
import type { Capability } from './capabilities.js';

/** A capability set held at a group and, by inheritance, everywhere below it. */
export interface Grant {
  scope: string;
  capabilities: ReadonlySet<Capability>;
  /**
   * Epoch ms from which the grant is void (a binding's `expireTime`); absent: never. Checked
   * on every decision, so a remembered grant stops granting at that instant on every worker.
   */
  expiresAt?: number;
  /**
   * Epoch ms from which the grant holds (a binding's `notBefore`); absent: already. Checked
   * like `expiresAt`, so a grant remembered before it starts begins to grant on time.
   */
  startsAt?: number;
  /**
   * The role bindings this grant is made of, each with what its own role grants: a
   * decision records as used only those whose role holds the capability decided.
   */
  bindings?: readonly GrantBinding[];
  /**
   * A conditional binding's condition, compiled: the grant is made of that one binding and
   * holds only on a decision given a request context in which the condition evaluates to
   * true. Without a context (lists, signed tokens, questions) it grants nothing: fail closed.
   */
  condition?: GrantCondition;
}

/** The condition of the one conditional binding a grant is made of. */
export interface GrantCondition {
  bindingUid: string;
  compiled: CompiledCondition;
}

/** One role binding behind a grant. */
export interface GrantBinding {
  uid: string;
  capabilities: ReadonlySet<Capability>;
}
