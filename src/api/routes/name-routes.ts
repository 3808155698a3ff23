import type { Context } from 'koa';
import type { z } from 'zod';
import type { Principal } from '../../auth/principal.js';
import type { NameResolver } from '../../resources/names/name-resolver.js';
import { groupV2, groupV2Schema } from '../../wire/group-wire.js';
import { identityV2, identityV2Schema } from '../../wire/identity-wire.js';
import { roleV2, roleV2Schema } from '../../wire/role-wire.js';
import { etagOfJson } from '../etag.js';
import { principalOf } from '../middleware/authn.js';
import { mountOperation, type ParameterContract, type RouteTarget } from '../openapi/contract.js';
import { API_ERRORS } from '../openapi/error-responses.js';
import { EXAMPLE_PATHS } from '../openapi/examples.js';

const VISIBILITY =
  'Under the rules of a Get: a name the caller cannot see is NOT_FOUND with the same body as ' +
  'a name that does not exist. Names are not unique under a parent: a name that means ' +
  'several resources the caller can see is FAILED_PRECONDITION, with one PreconditionFailure ' +
  'violation (AMBIGUOUS_NAME, its subject a uid) per candidate.';

const PATH_RULE =
  'Names are separated by `/` (a name never holds one). A path starts where the ' +
  "caller's view of the tree starts: at an organization, or, for a caller that cannot list " +
  'the groups above its grant, at the group it was granted on.';

function query(name: string, description: string, example?: string): ParameterContract {
  return {
    name,
    in: 'query',
    description,
    schema: { type: 'string' },
    ...(example === undefined ? {} : { example, required: true }),
  };
}

function one(ctx: Context, name: string): string | undefined {
  const v = ctx.query[name];
  return Array.isArray(v) ? v[0] : v;
}

/** A resolve: a GET of a collection's custom method answering the resource its Get does. */
function resolve<T>(
  t: RouteTarget,
  o: {
    collection: string;
    kind: string;
    summary: string;
    description: string;
    parameters: ParameterContract[];
    schema: z.ZodType;
    toWire: (item: T) => unknown;
  },
  run: (p: Principal, ctx: Context) => Promise<T>,
): void {
  mountOperation(
    t,
    {
      method: 'get',
      path: `/iam/v2beta1/${o.collection}:resolve`,
      operationId: `iam.${o.collection}.resolve`,
      summary: o.summary,
      description: `${o.description} ${VISIBILITY}`,
      tags: [o.kind === 'Identity' ? 'Identities' : `${o.kind}s`],
      access: 'bearer',
      parameters: o.parameters,
      response: {
        status: 200,
        description: `The ${o.kind.toLowerCase()}, as its Get answers it.`,
        schema: { name: o.kind, schema: o.schema, io: 'output' },
        headers: ['ETag'],
      },
      errors: API_ERRORS,
    },
    async (ctx: Context) => {
      const json = JSON.stringify(o.toWire(await run(principalOf(ctx), ctx)));
      ctx.set('ETag', etagOfJson(json));
      ctx.type = 'application/json';
      ctx.body = json;
    },
  );
}

/**
 * Names to resources: `groups:resolve`, `identities:resolve` and `roles:resolve`, custom
 * methods of their collections that answer what the resource's Get answers.
 */
export function mountNameRoutes(t: RouteTarget, names: NameResolver): void {
  resolve(
    t,
    {
      collection: 'groups',
      kind: 'Group',
      summary: 'Resolve a path of group names',
      description: `The group at the end of \`path\`. ${PATH_RULE}`,
      parameters: [query('path', 'Group names from the top, `/`-separated.', EXAMPLE_PATHS.folder)],
      schema: groupV2Schema,
      toWire: groupV2,
    },
    (p, ctx) => names.group(p, one(ctx, 'path')),
  );
  resolve(
    t,
    {
      collection: 'identities',
      kind: 'Identity',
      summary: 'Resolve an identity by its group path and name',
      description:
        'The identity named by the last name of `path`, under the group the names before it ' +
        `lead to (a single name: a person registered at the root). ${PATH_RULE}`,
      parameters: [query('path', 'Group names, then the identity name.', EXAMPLE_PATHS.identity)],
      schema: identityV2Schema,
      toWire: identityV2,
    },
    (p, ctx) => names.identity(p, one(ctx, 'path')),
  );
  resolve(
    t,
    {
      collection: 'roles',
      kind: 'Role',
      summary: 'Resolve a role by name',
      description:
        'A plain `name` is a built-in role or a custom role the caller may list: with ' +
        '`group`, one defined at that group or above it (the roles a binding there may name); ' +
        'without, one defined anywhere. A path (`acme/platform/deployer`) is the role of that ' +
        `name defined at that group. ${PATH_RULE}`,
      parameters: [
        query('name', 'A role name, or a group path and a role name.', 'auditor'),
        query(
          'group',
          'Where the role is to be used: a group uid or a path of names.',
          EXAMPLE_PATHS.folder,
        ),
      ],
      schema: roleV2Schema,
      toWire: roleV2,
    },
    (p, ctx) => names.role(p, one(ctx, 'name'), one(ctx, 'group')),
  );
}
