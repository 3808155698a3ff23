/**
 * The resource kinds the CLI drives, as one table: `arbor <command> list|get|create|update|
 * delete` is generated from each row (resource-commands.ts), so a kind is added here, not
 * copied. Paths and fields follow the API's OpenAPI document (src/client/openapi.json).
 */
import { durationText } from './duration.js';
import { windowText } from './time-left.js';

/** One resource as the API answers it: JSON, read loosely by the columns below. */
export type Item = Record<string, unknown>;

export interface Column {
  header: string;
  value(item: Item): string;
  /** A uid: never cut in the middle of a word, elided in the middle when it must be. */
  uid?: boolean;
  /** A name: never shortened, whatever the width (two names must stay two names). */
  whole?: boolean;
  /** A comma-separated list: shortened by whole items (`a,b,+3`), never inside one. */
  list?: boolean;
}

/** A flag of create/update that sets one body field. */
export interface Field {
  /** Commander's spelling: `--role <uid>`, `--single-use`. */
  flag: string;
  /** The body field it sets. */
  key: string;
  description: string;
  /** Repeatable: the field is a list. */
  list?: boolean;
  /**
   * How the flag's text becomes the field (default: as given): `pairs` is a repeatable
   * `name=value` into an object, `file` a file's contents, `in` a duration from now as an
   * RFC 3339 time, `for` a duration from the start (the body's `notBefore` when it has one,
   * else now) as an RFC 3339 time: `--from 2h --for 8h` is eight hours, from two hours on.
   * A `key` with dots sets a nested field (`claimMatch.issuer`).
   */
  from?: 'pairs' | 'file' | 'in' | 'for';
}

export type Verb = 'list' | 'get' | 'create' | 'update' | 'delete';

export interface ResourceKind {
  /** The command: `role-bindings`. */
  command: string;
  /** In words, for help: `role binding`. */
  noun: string;
  /** The collection path: `/iam/v2beta1/roleBindings`. */
  path: string;
  /** The List answer's array: `roleBindings`. */
  plural: string;
  verbs: readonly Verb[];
  /** Create without `--parent` makes a root (organizations). */
  rootCreate?: boolean;
  /** List filters beyond the common ones: query name → flag description. */
  filters?: Readonly<Record<string, string>>;
  fields: readonly Field[];
  columns: readonly Column[];
  /** Added by `-o wide`. */
  wide: readonly Column[];
}

const str = (v: unknown): string =>
  v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v);
const at =
  (...keys: string[]) =>
  (item: Item): string => {
    let v: unknown = item;
    for (const k of keys) v = (v as Item | undefined)?.[k];
    return str(v);
  };
/** A timestamp as a date and minute, in UTC: enough for a table. */
const when =
  (key: string) =>
  (item: Item): string =>
    str(item[key]).replace('T', ' ').slice(0, 16);
/** The group an item is at: a binding names it; an invite is a child of its group. */
export const groupUidOf = (item: Item): string => {
  const group = (item.group as Item | undefined)?.uid;
  if (typeof group === 'string') return group;
  const uid = str(item.uid);
  return uid.includes('/') ? uid.slice(0, uid.lastIndexOf('/')) : '';
};
const list = (key: string) => (item: Item) => ((item[key] as unknown[]) ?? []).join(',');

const UID: Column = { header: 'UID', value: at('uid'), uid: true };
const NAME: Column = { header: 'NAME', value: at('name'), whole: true };
const DESCRIPTION: Column = { header: 'DESCRIPTION', value: at('description') };
const CREATED: Column = { header: 'CREATED', value: when('createTime') };
const nameFields: Field[] = [
  { flag: '--name <name>', key: 'name', description: 'the name' },
  { flag: '--description <text>', key: 'description', description: 'the description' },
];
const CRUD: readonly Verb[] = ['list', 'get', 'create', 'update', 'delete'];

export const RESOURCE_KINDS: readonly ResourceKind[] = [
  {
    command: 'groups',
    noun: 'group',
    path: '/iam/v2beta1/groups',
    plural: 'groups',
    verbs: CRUD,
    rootCreate: true,
    fields: nameFields,
    columns: [NAME, UID, DESCRIPTION],
    wide: [CREATED],
  },
  {
    command: 'identities',
    noun: 'identity',
    path: '/iam/v2beta1/identities',
    plural: 'identities',
    verbs: CRUD,
    fields: [
      ...nameFields,
      // A claim match: which OIDC tokens assume the identity at the STS.
      { flag: '--issuer <url>', key: 'claimMatch.issuer', description: 'claim match: the iss' },
      {
        flag: '--issuer-pattern <regex>',
        key: 'claimMatch.issuerPattern',
        description: 'claim match: a pattern the iss matches',
      },
      { flag: '--subject <sub>', key: 'claimMatch.subject', description: 'claim match: the sub' },
      {
        flag: '--subject-pattern <regex>',
        key: 'claimMatch.subjectPattern',
        description: 'claim match: a pattern the sub matches',
      },
      {
        flag: '--audience <aud>',
        key: 'claimMatch.audience',
        description: 'claim match: an aud the token must carry',
      },
      {
        flag: '--claim <name=value>',
        key: 'claimMatch.claims',
        description: 'claim match: a further claim and its value (repeatable)',
        from: 'pairs',
      },
      // Static keys: tokens signed by keys given here, for issuers without discovery.
      {
        flag: '--static-issuer <iss>',
        key: 'staticKeys.issuer',
        description: 'static keys: the iss of the tokens',
      },
      {
        flag: '--static-subject <sub>',
        key: 'staticKeys.subject',
        description: 'static keys: the sub of the tokens',
      },
      {
        flag: '--issuer-keys-file <path>',
        key: 'staticKeys.issuerKeys',
        description: 'static keys: a JWKS file of the public keys that sign them',
        from: 'file',
      },
    ],
    columns: [
      NAME,
      UID,
      {
        header: 'ISSUER',
        value: (i) => at('claimMatch', 'issuer')(i) || at('staticKeys', 'issuer')(i),
      },
    ],
    wide: [
      {
        header: 'SUBJECT',
        value: (i) => at('claimMatch', 'subject')(i) || at('staticKeys', 'subject')(i),
      },
      CREATED,
    ],
  },
  {
    command: 'roles',
    noun: 'role',
    path: '/iam/v2beta1/roles',
    plural: 'roles',
    verbs: CRUD,
    fields: [
      ...nameFields,
      {
        flag: '--capability <name>',
        key: 'capabilities',
        description: 'a capability the role carries (repeatable)',
        list: true,
      },
    ],
    columns: [NAME, UID, { header: 'CAPABILITIES', value: list('capabilities'), list: true }],
    wide: [DESCRIPTION],
  },
  {
    command: 'role-bindings',
    noun: 'role binding',
    path: '/iam/v2beta1/roleBindings',
    plural: 'roleBindings',
    verbs: CRUD,
    filters: {
      identity: 'only bindings of this identity (a uid, or group path/name)',
      group: 'only at this group (a uid or a path of names)',
      role: 'only of this role (a uid or a name)',
    },
    fields: [
      {
        flag: '--identity <identity>',
        key: 'identityUid',
        description: 'the identity bound: a uid, or its group path and name (acme/ci)',
      },
      {
        flag: '--role <role>',
        key: 'roleUid',
        description: 'the role granted: a uid, or a name (built in, or at the group or above)',
      },
      {
        flag: '--not-before <time>',
        key: 'notBefore',
        description: 'a scheduled grant: when the binding starts granting (RFC 3339)',
      },
      {
        flag: '--from <duration>',
        key: 'notBefore',
        description: 'the same, as a duration from now: 90m, 2h, 7d',
        from: 'in',
      },
      {
        flag: '--for <duration>',
        key: 'expireTime',
        description:
          'how long the binding grants, from its start (--from or --not-before, else now; ' +
          'on update, a scheduled start still to come): 90m, 8h, 7d',
        from: 'for',
      },
      {
        flag: '--condition <expression>',
        key: 'condition.expression',
        description:
          'a conditional grant (create only): a CEL expression that must hold for each ' +
          'decision, e.g. \'resource.group.path.startsWith("acme/payments")\' (docs/api.md)',
      },
      {
        flag: '--condition-title <title>',
        key: 'condition.title',
        description: "the condition's title, shown beside it",
      },
      {
        flag: '--expire-time <time>',
        key: 'expireTime',
        description:
          'when the binding stops granting, as an instant instead of --for (RFC 3339, ' +
          'e.g. 2026-12-31T00:00:00Z)',
      },
    ],
    columns: [
      {
        header: 'IDENTITY',
        value: (b) => at('identity', 'name')(b) || at('identity', 'uid')(b),
        whole: true,
      },
      { header: 'ROLE', value: at('role', 'name'), whole: true },
      // The path of names when the CLI has looked it up (resource-actions.ts), else the name.
      { header: 'GROUP', value: (b) => at('groupPath')(b) || at('group', 'name')(b), whole: true },
      // "starts in 2h, for 8h", "expires in 3d": left out of a table where no binding has
      // an end or a start to come. The instants themselves are in -o wide.
      { header: 'WINDOW', value: (b) => windowText(b) },
      UID,
    ],
    wide: [
      { header: 'IDENTITY UID', value: at('identity', 'uid'), uid: true },
      { header: 'GROUP_UID', value: at('group', 'uid'), uid: true },
      { header: 'STARTS (UTC)', value: when('notBefore') },
      { header: 'EXPIRES (UTC)', value: when('expireTime') },
      CREATED,
    ],
  },
  {
    command: 'identity-providers',
    noun: 'identity provider',
    path: '/iam/v2beta1/identityProviders',
    plural: 'identityProviders',
    verbs: CRUD,
    fields: [
      ...nameFields,
      {
        flag: '--default-role <role>',
        key: 'defaultRole',
        description: 'role bound on first sign-in',
      },
    ],
    columns: [NAME, UID, { header: 'ISSUER', value: at('oidc', 'issuer') }],
    wide: [{ header: 'CLIENT ID', value: at('oidc', 'clientId') }, CREATED],
  },
  {
    command: 'invites',
    noun: 'group invite',
    path: '/iam/v2beta1/groupInvites',
    plural: 'groupInvites',
    verbs: CRUD,
    filters: { group: 'only invites to this group (a uid or a path of names)' },
    fields: [
      {
        flag: '--role <role>',
        key: 'roleUid',
        description: 'the role the invite grants: a uid or a name',
      },
      { flag: '--email <address>', key: 'email', description: 'who may redeem it' },
      { flag: '--ttl <duration>', key: 'ttl', description: 'how long it is valid, e.g. 3600s' },
      { flag: '--single-use', key: 'singleUse', description: 'redeemable once' },
    ],
    columns: [
      { header: 'ROLE', value: (i) => at('role', 'name')(i) || at('roleUid')(i), whole: true },
      // The path of names the CLI looked up (resource-actions.ts); an invite's group is its parent.
      { header: 'GROUP', value: (i) => at('groupPath')(i) || groupUidOf(i), whole: true },
      { header: 'EXPIRES', value: when('expirationTime') },
      UID,
    ],
    wide: [
      { header: 'ROLE_UID', value: at('roleUid'), uid: true },
      { header: 'GROUP_UID', value: groupUidOf, uid: true },
      { header: 'EMAIL', value: at('email') },
      { header: 'SINGLE-USE', value: at('singleUse') },
      { header: 'CODE', value: at('code') },
    ],
  },
  {
    command: 'repos',
    noun: 'repo',
    path: '/registry/v2beta1/repos',
    plural: 'repos',
    verbs: CRUD,
    fields: nameFields,
    columns: [NAME, UID, DESCRIPTION],
    wide: [CREATED],
  },
  {
    command: 'tags',
    noun: 'tag',
    path: '/registry/v2beta1/tags',
    plural: 'tags',
    verbs: ['list', 'get', 'create', 'delete'],
    filters: { digest: 'only tags of this digest' },
    fields: [
      { flag: '--name <name>', key: 'name', description: 'the tag' },
      { flag: '--digest <digest>', key: 'digest', description: 'sha256:… of the manifest' },
      { flag: '--deprecated', key: 'deprecated', description: 'mark the tag deprecated' },
    ],
    columns: [NAME, { header: 'DIGEST', value: (t) => at('digest')(t).slice(0, 19) }, UID],
    wide: [{ header: 'FULL DIGEST', value: at('digest') }, CREATED],
  },
  {
    command: 'advisories',
    noun: 'advisory',
    path: '/vulnerabilities/v2beta1/advisories',
    plural: 'advisories',
    verbs: ['list', 'get'],
    filters: {
      id: 'only the advisory with this OSV id',
      package: 'only advisories of this package',
      ecosystem: 'only advisories of this ecosystem',
      severity: 'only advisories of this severity level',
    },
    fields: [],
    columns: [
      { header: 'ID', value: at('id'), whole: true },
      { header: 'SEVERITY', value: at('severityLevel') },
      { header: 'SUMMARY', value: at('summary') },
    ],
    wide: [UID, { header: 'MODIFIED', value: when('modified') }],
  },
  {
    command: 'subscriptions',
    noun: 'event subscription',
    path: '/events/v2beta1/subscriptions',
    plural: 'subscriptions',
    verbs: CRUD,
    fields: [
      ...nameFields,
      { flag: '--sink <url>', key: 'sink', description: 'the https address events are sent to' },
      {
        flag: '--type <pattern>',
        key: 'types',
        description: 'an event type, e.g. dev.arbor.iam.* (repeatable)',
        list: true,
      },
    ],
    columns: [NAME, UID, { header: 'STATE', value: at('status', 'state') }],
    wide: [
      { header: 'SINK', value: at('sink') },
      { header: 'TYPES', value: list('types'), list: true },
    ],
  },
  {
    // Asked with `arbor request`, decided with `arbor approve` / `arbor deny` (request-commands.ts).
    command: 'requests',
    noun: 'access request',
    path: '/iam/v2beta1/accessRequests',
    plural: 'accessRequests',
    verbs: ['list', 'get'],
    filters: {
      state: 'only in this state: PENDING, APPROVED, DENIED, CANCELLED, EXPIRED',
      requester: 'only of this requesting identity uid',
      role: 'only for this role (a uid or a name)',
    },
    fields: [],
    // An approver's inbox reads one request a line: who asks, for which role, where, for
    // how long and from when, why, how far along. Paths are the server's (requesterPath and
    // rolePath shown to whoever may approve; docs/access-requests.md), uids otherwise.
    columns: [
      { header: 'REQUESTER', value: (r) => str(r.requesterPath ?? r.requesterUid), whole: true },
      { header: 'ROLE', value: (r) => str(r.rolePath ?? r.roleUid), whole: true },
      { header: 'GROUP', value: (r) => str(r.groupPath ?? r.groupUid), whole: true },
      {
        header: 'FOR',
        value: (r) =>
          typeof r.durationSeconds === 'number' ? durationText(r.durationSeconds) : '',
      },
      {
        header: 'FROM',
        value: (r) => (typeof r.notBefore === 'string' ? r.notBefore : 'approval'),
      },
      { header: 'REASON', value: at('reason') },
      {
        header: 'APPROVALS',
        value: (r) => `${((r.approvals as unknown[]) ?? []).length} of ${str(r.approvalsRequired)}`,
      },
      { header: 'STATE', value: at('state') },
      UID,
    ],
    wide: [
      { header: 'REQUESTER_UID', value: at('requesterUid'), uid: true },
      { header: 'ROLE_UID', value: at('roleUid'), uid: true },
      { header: 'GROUP_UID', value: at('groupUid'), uid: true },
      { header: 'BINDING', value: at('bindingUid'), uid: true },
      { header: 'CREATED', value: when('createTime') },
    ],
  },
];

/** `identity` → `identities`, `advisory` → `advisories`, `group` → `groups`. */
export const plural = (noun: string) =>
  /[^aeiou]y$/.test(noun) ? `${noun.slice(0, -1)}ies` : `${noun}s`;
/** `a group`, `an identity`, `an event subscription`. */
export const withArticle = (noun: string) => `${/^[aeiou]/.test(noun) ? 'an' : 'a'} ${noun}`;

/** @returns the kind whose command is `command`, or undefined. */
export function kindOf(command: string): ResourceKind | undefined {
  return RESOURCE_KINDS.find((k) => k.command === command);
}
