import type { z } from 'zod';
import type { ListSpec } from '../core/list-request.js';
import { GROUP_LIST, GROUP_TYPE, GROUP_UPDATE } from '../resources/groups/group.js';
import { IDENTITY_LIST, IDENTITY_TYPE, IDENTITY_UPDATE } from '../resources/identities/identity.js';
import {
  ROLE_BINDING_LIST,
  ROLE_BINDING_TYPE,
  ROLE_BINDING_UPDATE,
} from '../resources/role-bindings/role-binding.js';
import { ROLE_LIST, ROLE_TYPE, ROLE_UPDATE } from '../resources/roles/role.js';
import { groupV2, groupV2Schema } from './group-wire.js';
import { identityV2, identityV2Schema } from './identity-wire.js';
import { roleBindingV2, roleBindingV2Schema } from './role-binding-wire.js';
import { roleV2, roleV2Schema } from './role-wire.js';

/**
 * One resource kind as every door names and shows it: the REST mount (api/routes), the gRPC
 * mount (grpc/routes.ts) and the audit and event presenter (resource-presenter.ts) read
 * these, so a kind's names, list contract and wire form are written once. What only one
 * door needs (REST's input schemas and examples, gRPC's generated service) stays in that
 * door. The CLI, a client, keeps its own table; test/unit/kinds.test.ts holds it to this one.
 */
export interface KindDescriptor<T, W extends z.ZodType> {
  /** The type audit records and CloudEvents carry: `iam.arbor.dev/Group`. */
  type: string;
  /** Singular, as RPC and schema names spell it: `RoleBinding` (GetRoleBinding). */
  name: string;
  /** The List answer's array and the v2 path's last segment: `roleBindings`. */
  plural: string;
  /** The v2 collection path: `/iam/v2beta1/roleBindings`. */
  path: string;
  spec: ListSpec;
  wireSchema: W;
  /** The v2 wire form: REST's JSON, gRPC's proto3 JSON, an audit record's resource. */
  toWire(item: T): z.output<W>;
  /** Whether Create with no parent is valid (root groups). */
  createWithoutParent?: boolean;
  /** What Create's parent is, when not a group (a tag's repo). */
  parentKind?: string;
  /**
   * Server-owned fields (AIP-203 output only): a Create or Update body may carry them, as a
   * client echoing a resource back does, and they are ignored, never taken from input. The
   * same list the kind's service strips; the document marks them `readOnly`.
   */
  outputOnly: readonly string[];
}

/** The gRPC List method's plural: `roleBindings` → `RoleBindings` (ListRoleBindings). */
export function rpcPlural(k: { plural: string }): string {
  return k.plural.charAt(0).toUpperCase() + k.plural.slice(1);
}

/**
 * Typed once here so each descriptor's wire function is checked against its schema. A
 * feature's kind declares its descriptor in its own wire file with this.
 */
export const kind = <T, W extends z.ZodType>(k: KindDescriptor<T, W>): KindDescriptor<T, W> => k;

export const GROUP_KIND = kind({
  type: GROUP_TYPE,
  name: 'Group',
  plural: 'groups',
  path: '/iam/v2beta1/groups',
  spec: GROUP_LIST,
  wireSchema: groupV2Schema,
  toWire: groupV2,
  createWithoutParent: true,
  outputOnly: GROUP_UPDATE.outputOnly,
});

export const IDENTITY_KIND = kind({
  type: IDENTITY_TYPE,
  name: 'Identity',
  plural: 'identities',
  path: '/iam/v2beta1/identities',
  spec: IDENTITY_LIST,
  wireSchema: identityV2Schema,
  toWire: identityV2,
  outputOnly: IDENTITY_UPDATE.outputOnly,
});

export const ROLE_KIND = kind({
  type: ROLE_TYPE,
  name: 'Role',
  plural: 'roles',
  path: '/iam/v2beta1/roles',
  spec: ROLE_LIST,
  wireSchema: roleV2Schema,
  toWire: roleV2,
  outputOnly: ROLE_UPDATE.outputOnly,
});

export const ROLE_BINDING_KIND = kind({
  type: ROLE_BINDING_TYPE,
  name: 'RoleBinding',
  plural: 'roleBindings',
  path: '/iam/v2beta1/roleBindings',
  spec: ROLE_BINDING_LIST,
  wireSchema: roleBindingV2Schema,
  toWire: roleBindingV2,
  outputOnly: ROLE_BINDING_UPDATE.outputOnly,
});

/** A descriptor of some kind, its item type forgotten (for tables over every kind). */
export interface AnyKind {
  type: string;
  name: string;
  plural: string;
  path: string;
  spec: ListSpec;
  toWire(item: never): unknown;
  createWithoutParent?: boolean;
  parentKind?: string;
  outputOnly: readonly string[];
}

/**
 * The kinds that are not features (src/features.ts): every other kind's descriptor is in
 * its wire file, and src/features.ts's `KINDS` holds them all.
 */
export const CORE_KINDS: readonly AnyKind[] = [
  GROUP_KIND,
  IDENTITY_KIND,
  ROLE_KIND,
  ROLE_BINDING_KIND,
];
