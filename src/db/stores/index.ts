import { KnexAccessStore } from './access-store.js';
import { KnexGroupStore } from './group-store.js';
import { KnexIdentityStore } from './identity-store.js';
import { KnexManagerStore } from './manager-store.js';
import { KnexPinger } from './ping-store.js';
import { KnexRepoStore } from './repo-store.js';
import { KnexRoleBindingStore } from './role-binding-store.js';
import { KnexRoleStore } from './role-store.js';
import { KnexTrustedKeyStore } from './trusted-key-store.js';
import { KnexAuditStore } from './audit-store.js';
import { KnexOutboxStore } from './outbox-store.js';
import { KnexNameStore } from './name-store.js';
import { KnexSimulationStore } from './simulation-store.js';
import { KnexUsageStore } from './usage-store.js';
import { KnexIssuedTokenStore } from './issued-token-store.js';
import { KnexTokenRevocationStore } from './token-revocation-store.js';

/**
 * One instance of every store more than one service reads, or that is not a feature's;
 * stateless and shared. A feature makes its own store (src/features/).
 */
export function createStores() {
  return {
    pinger: new KnexPinger(),
    groups: new KnexGroupStore(),
    identities: new KnexIdentityStore(),
    roles: new KnexRoleStore(),
    roleBindings: new KnexRoleBindingStore(),
    access: new KnexAccessStore(),
    simulation: new KnexSimulationStore(),
    repos: new KnexRepoStore(),
    trustedKeys: new KnexTrustedKeyStore(),
    managers: new KnexManagerStore(),
    audit: new KnexAuditStore(),
    outbox: new KnexOutboxStore(),
    names: new KnexNameStore(),
    usage: new KnexUsageStore(),
    tokenRevocations: new KnexTokenRevocationStore(),
    issuedTokens: new KnexIssuedTokenStore(),
  };
}
