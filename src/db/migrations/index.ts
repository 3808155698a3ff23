import type { Knex } from 'knex';
import * as m0001 from './0001-groups.js';
import * as m0002 from './0002-iam.js';
import * as m0003 from './0003-idp-accounts-invites.js';
import * as m0004 from './0004-registry.js';
import * as m0005 from './0005-advisories.js';
import * as m0006 from './0006-trusted-issuer-keys.js';
import * as m0007 from './0007-sealed-client-secrets.js';
import * as m0008 from './0008-managed-by.js';
import * as m0010 from './0010-pushes-and-people.js';
import * as m0012 from './0012-audit-and-events.js';
// @migration-imports (append one import per migration below this line)
import * as m0013 from './0013-group-counts.js';
import * as m0014 from './0014-people-per-provider.js';
import * as m0015 from './0015-webhook-validation.js';
import * as m0017 from './0017-binding-expiry.js';
import * as m0018 from './0018-change-notifications.js';
import * as m0019 from './0019-binding-holders-index.js';
import * as m0020 from './0020-revocations-recorded.js';
import * as m0021 from './0021-last-used.js';
import * as m0022 from './0022-binding-not-before.js';
import * as m0023 from './0023-access-requests.js';
import * as m0024 from './0024-outbox-traceparent.js';
import * as m0025 from './0025-instant-bounds.js';
import * as m0026 from './0026-one-pending-request.js';
import * as m0027 from './0027-budgets.js';
import * as m0028 from './0028-token-revocations.js';
import * as m0029 from './0029-access-reviews.js';
import * as m0030 from './0030-delegation-policies.js';
import * as m0031 from './0031-issued-tokens.js';
import * as m0032 from './0032-binding-conditions.js';
import * as m0033 from './0033-audit-actors.js';
import * as m0034 from './0034-identity-notifications.js';

interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/** Every migration, in order. Append only: a merged migration is never edited. */
export const migrations: ReadonlyArray<readonly [string, Migration]> = [
  ['0001-groups', m0001],
  ['0002-iam', m0002],
  ['0003-idp-accounts-invites', m0003],
  ['0004-registry', m0004],
  ['0005-advisories', m0005],
  ['0006-trusted-issuer-keys', m0006],
  ['0007-sealed-client-secrets', m0007],
  ['0008-managed-by', m0008],
  ['0010-pushes-and-people', m0010],
  ['0012-audit-and-events', m0012],
  // @migration-list (append one entry per migration below this line, in number order)
  ['0013-group-counts', m0013],
  ['0014-people-per-provider', m0014],
  ['0015-webhook-validation', m0015],
  ['0017-binding-expiry', m0017],
  ['0018-change-notifications', m0018],
  ['0019-binding-holders-index', m0019],
  ['0020-revocations-recorded', m0020],
  ['0021-last-used', m0021],
  ['0022-binding-not-before', m0022],
  ['0023-access-requests', m0023],
  ['0024-outbox-traceparent', m0024],
  ['0025-instant-bounds', m0025],
  ['0026-one-pending-request', m0026],
  ['0027-budgets', m0027],
  ['0028-token-revocations', m0028],
  ['0029-access-reviews', m0029],
  ['0030-delegation-policies', m0030],
  ['0031-issued-tokens', m0031],
  ['0032-binding-conditions', m0032],
  ['0033-audit-actors', m0033],
  ['0034-identity-notifications', m0034],
];
