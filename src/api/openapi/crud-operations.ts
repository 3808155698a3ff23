import { z } from 'zod';
import type { ListSpec } from '../../core/list-request.js';
import type {
  Example,
  NamedSchema,
  OperationContract,
  ParameterContract,
  RequestBodyContract,
} from './contract.js';
import { API_ERRORS, CREATE_ERRORS, DELETE_ERRORS, UPDATE_ERRORS } from './error-responses.js';
import {
  listParameters,
  listResponseSchema,
  v1ListParameters,
  v1ListResponseSchema,
  type ListQueryExample,
} from './list-contract.js';

/**
 * Request examples of one resource kind. Uids are the stand-ins of examples.ts; every
 * example is accepted by a fresh server once those stand for real resources
 * (test/integration/openapi.test.ts sends each one).
 */
export interface ResourceExamples {
  /** The resource that Get, Update and Delete name. */
  uid?: string;
  /** The parent that Create names. */
  parent?: string;
  create?: unknown;
  /** Create without a parent (organizations). */
  createRoot?: unknown;
  update?: unknown;
  updateMask?: string;
  list?: ListQueryExample;
}

/** What the document needs to know of one kind, beyond its routes. */
export interface ResourceContract {
  /** Path of the collection, e.g. `/iam/v2beta1/groups`. */
  path: string;
  /** Schema name in the document (`RoleBinding`); summaries say `role binding`. */
  name: string;
  spec: ListSpec;
  wireSchema: z.ZodType;
  createSchema?: z.ZodType;
  /** v2: the patch after the mask is applied; v1: the full replacement. */
  updateSchema?: z.ZodType;
  /** What Create's path names; `group` unless said. */
  parentKind?: string;
  /** OpenAPI tag; by default the plural in words (`Role bindings`). */
  tag?: string;
  /**
   * Server-owned fields a Create or Update body may echo and that are ignored (AIP-203):
   * the input schemas list them `readOnly`, so the document allows what the server accepts.
   */
  outputOnly?: readonly string[];
  examples?: ResourceExamples;
}

export type CrudVerb = 'list' | 'get' | 'createRoot' | 'create' | 'update' | 'replace' | 'delete';

const EMPTY: NamedSchema = { name: 'Empty', schema: z.object({}), io: 'output' };

/** `roleBindings` / `RoleBinding` / `group_invites` → `role bindings` / `group invites`. */
export function words(s: string): string {
  return s
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replaceAll('_', ' ')
    .toLowerCase();
}

const article = (w: string) => (/^[aeiou]/.test(w) ? `an ${w}` : `a ${w}`);
const capital = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** `/iam/v2beta1/roleBindings` → `iam.roleBindings`; `/iam/v1/rolebindings` → `iam.v1.rolebindings`. */
function operationPrefix(path: string): string {
  const [, domain, version, collection] = path.split('/');
  return version === 'v1' ? `${domain}.v1.${collection}` : `${domain}.${collection}`;
}

function uidParameter(description: string, example: string | undefined): ParameterContract {
  return {
    name: 'uid',
    in: 'path',
    required: true,
    description: `${description} A uid path: send its \`/\` as they are or as %2F.`,
    schema: { type: 'string' },
    ...(example === undefined ? {} : { example }),
  };
}

const IF_MATCH: ParameterContract = {
  name: 'If-Match',
  in: 'header',
  description:
    'Only if the resource still has one of these ETags (or `*`); else 412 and nothing changes.',
  schema: { type: 'string' },
};

/** Reads carry the token of a write they must see (docs/operations.md, "Read replicas"). */
const CONSISTENCY_TOKEN: ParameterContract = {
  name: 'Arbor-Consistency-Token',
  in: 'header',
  description:
    'A token a write answered with: a read replica answers only once it has that write, ' +
    'else the primary does. Opaque; a malformed one reads the primary.',
  schema: { type: 'string' },
};

function body(schema: NamedSchema, summary: string, value: unknown): RequestBodyContract {
  const examples: Record<string, Example> = {};
  if (value !== undefined) examples.example = { summary, value };
  return { mediaType: 'application/json', schema, required: true, examples };
}

/** The operations of one kind in one version, each with the verb that mounts it. */
export class CrudOperations {
  private readonly prefix: string;
  private readonly plural: string;
  private readonly one: string;
  private readonly many: string;
  private readonly parent: string;
  private readonly tags: string[];
  private readonly wire: NamedSchema;
  private readonly ex: ResourceExamples;

  constructor(
    private readonly r: ResourceContract,
    private readonly version: 'v2' | 'v1',
    plural: string,
  ) {
    this.prefix = operationPrefix(r.path);
    this.plural = plural;
    this.one = words(r.name);
    this.many = words(plural);
    this.parent = r.parentKind ?? 'group';
    this.tags = [version === 'v1' ? 'v1' : (r.tag ?? capital(this.many))];
    const suffix = version === 'v1' ? 'V1' : '';
    this.wire = { name: `${r.name}${suffix}`, schema: r.wireSchema, io: 'output' };
    this.ex = r.examples ?? {};
  }

  private base(verb: CrudVerb, method: OperationContract['method'], path: string) {
    const v1 = this.version === 'v1' ? ' (v1)' : '';
    const summary: Record<CrudVerb, string> = {
      list: `List ${this.many}`,
      get: `Get ${article(this.one)}`,
      createRoot: `Create ${article(this.one)} at the root`,
      create: `Create ${article(this.one)} under ${article(this.parent)}`,
      update: `Update ${article(this.one)}`,
      replace: `Replace ${article(this.one)}`,
      delete: `Delete ${article(this.one)}`,
    };
    return {
      method,
      path,
      operationId: `${this.prefix}.${verb}`,
      summary: summary[verb] + v1,
      tags: this.tags,
      access: 'bearer' as const,
    };
  }

  list(): OperationContract {
    const v1 = this.version === 'v1';
    const plural = this.plural;
    return {
      ...this.base('list', 'get', this.r.path),
      description: v1
        ? 'Every visible result in `items`, unpaginated (v1).'
        : `Visible ${this.many}, a page at a time, in the List envelope (spec §2, §4.1).`,
      parameters: [
        ...(v1
          ? v1ListParameters(this.r.spec, this.ex.list)
          : listParameters(this.r.spec, this.ex.list)),
        CONSISTENCY_TOKEN,
      ],
      response: {
        status: 200,
        description: `A page of ${this.many}.`,
        schema: v1
          ? {
              name: `${this.wire.name}List`,
              schema: v1ListResponseSchema(this.r.wireSchema),
              io: 'output',
              parts: [this.wire],
            }
          : {
              name: `List${pascal(plural)}Response`,
              schema: listResponseSchema(plural, this.r.wireSchema),
              io: 'output',
              parts: [this.wire],
            },
      },
      errors: API_ERRORS,
    };
  }

  get(): OperationContract {
    return {
      ...this.base('get', 'get', `${this.r.path}/{uid}`),
      parameters: [uidParameter(`The ${this.one}'s uid.`, this.ex.uid), CONSISTENCY_TOKEN],
      response: {
        status: 200,
        description: `The ${this.one}.`,
        schema: this.wire,
        headers: ['ETag'],
      },
      errors: API_ERRORS,
    };
  }

  create(root: boolean): OperationContract {
    const verb = root ? 'createRoot' : 'create';
    const schema = this.inputSchema('create', this.r.createSchema);
    return {
      ...this.base(verb, 'post', root ? this.r.path : `${this.r.path}/{uid}`),
      description: root
        ? 'An organization: only the admin token may create one.'
        : `The parent is in the path; the body holds only the ${this.one}'s fields.`,
      ...(root
        ? {}
        : { parameters: [uidParameter(`The parent ${this.parent}'s uid.`, this.ex.parent)] }),
      requestBody: body(
        schema,
        `Create ${article(this.one)}`,
        root ? this.ex.createRoot : this.ex.create,
      ),
      response: {
        status: 200,
        description: `The new ${this.one}.`,
        schema: this.wire,
        headers: ['Arbor-Consistency-Token'],
      },
      errors: CREATE_ERRORS,
    };
  }

  /** v2 PATCH with `updateMask`; v1 PUT and PATCH replace the whole resource. */
  update(verb: 'update' | 'replace'): OperationContract {
    const v1 = this.version === 'v1';
    const method = verb === 'replace' ? 'put' : 'patch';
    const mask: ParameterContract = {
      name: 'updateMask',
      in: 'query',
      description:
        'Comma-separated fields to change (also spelt `update_mask`); a named field left out ' +
        'of the body is reset. Without it, exactly the fields in the body change (spec §4.2).',
      schema: { type: 'string' },
      ...(this.ex.updateMask === undefined ? {} : { example: this.ex.updateMask }),
    };
    return {
      ...this.base(verb, method, `${this.r.path}/{uid}`),
      description: v1
        ? 'Full replacement (v1): fields left out of the body are reset.'
        : 'Field-mask update: see `updateMask`.',
      parameters: [
        uidParameter(`The ${this.one}'s uid.`, this.ex.uid),
        ...(v1 ? [] : [mask]),
        IF_MATCH,
      ],
      requestBody: body(
        this.inputSchema(v1 ? 'update' : 'patch', this.r.updateSchema),
        `Update ${article(this.one)}`,
        this.ex.update,
      ),
      response: {
        status: 200,
        description: `The ${this.one} as updated.`,
        schema: this.wire,
        headers: ['ETag', 'Arbor-Consistency-Token'],
      },
      errors: UPDATE_ERRORS,
    };
  }

  delete(): OperationContract {
    return {
      ...this.base('delete', 'delete', `${this.r.path}/{uid}`),
      parameters: [uidParameter(`The ${this.one}'s uid.`, this.ex.uid), IF_MATCH],
      response: {
        status: 200,
        description: 'Deleted: an empty object.',
        schema: EMPTY,
        headers: ['Arbor-Consistency-Token'],
      },
      errors: DELETE_ERRORS,
    };
  }

  private inputSchema(what: 'create' | 'patch' | 'update', schema: z.ZodType | undefined) {
    if (!schema) throw new Error(`${this.prefix}: the ${what} route needs its schema`);
    const suffix = this.version === 'v1' ? 'V1' : '';
    const name = `${this.r.name}${suffix}${pascal(what)}`;
    // A v1 route without its own list shares the v2 route's schema (and its one name).
    const documented = this.r.outputOnly
      ? withReadOnly(name, schema, this.r.outputOnly, this.r.wireSchema)
      : (WITH_READ_ONLY.get(schema) ?? schema);
    return { name, schema: documented, io: 'input' as const };
  }
}

/** Each input schema's documented form, made once: one zod object is one named schema. */
const WITH_READ_ONLY = new WeakMap<z.ZodType, z.ZodType>();

/**
 * `schema` with each server-owned field it lacks added as optional and `readOnly`, typed as
 * the resource shows it where the wire schema says, so a client may send back what it read
 * (the service ignores those fields; every other unknown field stays refused).
 * @throws Error when there are such fields and `schema` is not an object schema.
 */
function withReadOnly(
  name: string,
  schema: z.ZodType,
  outputOnly: readonly string[],
  wire: z.ZodType,
): z.ZodType {
  const made = WITH_READ_ONLY.get(schema);
  if (made) return made;
  if (!(schema instanceof z.ZodObject)) {
    if (outputOnly.length === 0) return schema;
    throw new Error(`${name}: server-owned fields need an object schema to be listed in`);
  }
  const wireShape = wire instanceof z.ZodObject ? (wire.shape as Record<string, z.ZodType>) : {};
  const added: Record<string, z.ZodType> = {};
  for (const field of outputOnly) {
    if (field in schema.shape) continue;
    const type = wireShape[field] ?? z.unknown();
    added[field] = type.optional().meta({
      readOnly: true,
      description: 'Output only: accepted in a request body and ignored.',
    });
  }
  const documented = Object.keys(added).length === 0 ? schema : schema.extend(added);
  WITH_READ_ONLY.set(schema, documented);
  return documented;
}
