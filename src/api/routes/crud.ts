import type { Context } from 'koa';
import type { z } from 'zod';
import type { Principal } from '../../auth/principal.js';
import {
  parseListRequest,
  type ListRequest,
  type ListSpec,
  type QueryParams,
} from '../../core/list-request.js';
import type { ListPage } from '../../resources/list-types.js';
import type { KindDescriptor } from '../../wire/kinds.js';
import { withPrecondition } from '../../resources/precondition.js';
import { etagOf, etagOfJson, ifMatchOf } from '../etag.js';
import type { Read, ReadAnswer } from '../fast-reads.js';
import { madeOnce } from '../../wire/made-once.js';
import { principalOf } from '../middleware/authn.js';
import { readJsonObject } from '../middleware/json-body.js';
import { mountOperation, type RouteTarget } from '../openapi/contract.js';
import { CrudOperations, type ResourceContract } from '../openapi/crud-operations.js';
import { listAnswer } from './list-answer.js';

type Body = Record<string, unknown>;

/** v1 bodies echo v1's names for output-only fields; they are never taken from input. */
function withoutV1OutputFields(body: Body): Body {
  const { id: _id, createdAt: _c, updatedAt: _u, ...rest } = body;
  return rest;
}

/** What a resource's service offers the REST front door; every method is optional. */
export interface CrudHandlers<T> {
  create?(p: Principal, parent: string | undefined, body: Body): Promise<T>;
  get?(p: Principal, uid: string): Promise<T>;
  list?(p: Principal, req: ListRequest): Promise<ListPage<T>>;
  update?(p: Principal, uid: string, body: Body, mask: string | string[] | undefined): Promise<T>;
  delete?(p: Principal, uid: string): Promise<void>;
}

/**
 * Runs one Update or Delete under the request's `If-Match` (see resources/precondition.ts):
 * checked against the resource's current ETag inside the service's transaction, under a
 * lock on its uid, so two conditional writers cannot both win. A mismatch is
 * FAILED_PRECONDITION, answered HTTP 412.
 */
function conditionally<T, R>(
  ctx: Context,
  h: CrudHandlers<T>,
  toWire: (item: T) => unknown,
  uid: string,
  write: () => Promise<R>,
): Promise<R> {
  const ifMatch = ifMatchOf(ctx);
  if (ifMatch === undefined || !h.get) return write();
  const get = h.get.bind(h);
  const p = principalOf(ctx);
  return withPrecondition(
    { uid, ifMatch, current: async () => etagOf(toWire(await get(p, uid))) },
    write,
  );
}

/** A resource as a Get or Update answers it: its JSON, serialised once, and its ETag. */
function withEtag(wire: unknown): ReadAnswer {
  const json = JSON.stringify(wire);
  return { json, etag: etagOfJson(json) };
}

/** A read's answer as the Koa route sends it (the fast path sends the same, see fast-reads.ts). */
function answerRead(ctx: Context, a: ReadAnswer): void {
  if (a.etag !== undefined) ctx.set('ETag', a.etag);
  ctx.type = 'application/json';
  ctx.body = a.json;
}

/** DELETE `<path>/<uid>`: an empty JSON body on success, in v1 and v2 alike. */
function deleteHandler<T>(h: CrudHandlers<T>, toWire: (item: T) => unknown) {
  const del = h.delete!.bind(h);
  return async (ctx: Context) => {
    const uid = uidParam(ctx);
    if (uid === undefined) return;
    await conditionally(ctx, h, toWire, uid, () => del(principalOf(ctx), uid));
    ctx.status = 200;
    ctx.body = {};
  };
}

/** A kind's Get (v1 or v2, by its wire mapping), as both REST paths run it. */
function getRead<T>(
  get: (p: Principal, uid: string) => Promise<T>,
  toWire: (item: T) => unknown,
): Read {
  // A frozen item is one a read cache shares between requests (db/read-cache.ts): its answer
  // is made once and shared too, `toWire` being a function of the item alone.
  const answerOf = madeOnce((item: T): ReadAnswer => withEtag(toWire(item)));
  return async (p, uid) => answerOf(await get(p, uid!));
}

/** The Koa route of a Get: the uid from the path, then the read. */
function getHandler(read: Read) {
  return async (ctx: Context) => {
    const uid = uidParam(ctx);
    if (uid === undefined) return;
    answerRead(ctx, await read(principalOf(ctx), uid, {}));
  };
}

function uidParam(ctx: Context): string | undefined {
  const v = (ctx.params as Record<string, string | undefined>).uid;
  return v === undefined || v === '' ? undefined : v;
}

/**
 * A kind's v2 routes: its contract (schemas and examples for the document) and how its
 * domain objects become wire JSON, checked against the wire schema's type.
 */
export interface V2Options<T, W extends z.ZodType> extends ResourceContract {
  /** Key of the array in List responses, e.g. `groups`. */
  plural: string;
  wireSchema: W;
  toWire(item: T): z.output<W>;
  /** Whether `POST <path>` with no parent is a valid create (root groups). */
  createWithoutParent?: boolean;
  bodyLimit: number;
}

/** What a kind's descriptor gives its v2 routes. */
type KindOptions<T, W extends z.ZodType> = Pick<
  V2Options<T, W>,
  | 'path'
  | 'plural'
  | 'name'
  | 'spec'
  | 'wireSchema'
  | 'toWire'
  | 'createWithoutParent'
  | 'parentKind'
  | 'outputOnly'
>;

/**
 * A kind's v2 options from its descriptor (wire/kinds.ts), the one table the REST and gRPC
 * doors and the audit presenter share; the route adds what only REST has (input schemas,
 * examples, the body limit).
 */
export function v2Kind<T, W extends z.ZodType>(k: KindDescriptor<T, W>): KindOptions<T, W> {
  const { path, plural, name, spec, wireSchema, toWire, createWithoutParent, parentKind } = k;
  return {
    path,
    plural,
    name,
    spec,
    wireSchema,
    toWire,
    outputOnly: k.outputOnly,
    ...(createWithoutParent === undefined ? {} : { createWithoutParent }),
    ...(parentKind === undefined ? {} : { parentKind }),
  };
}

/**
 * Mount the v2 contract for one resource: List/Get on GET, Create on POST to the parent,
 * Update on PATCH with `updateMask`, Delete with an empty body. One shape for every kind;
 * each route is recorded in the contract as it is mounted.
 */
export function mountV2<T, W extends z.ZodType>(
  t: RouteTarget,
  h: CrudHandlers<T>,
  o: V2Options<T, W>,
): void {
  const { plural, spec } = o;
  const toWire = (item: T): unknown => o.toWire(item);
  const ops = new CrudOperations(o, 'v2', plural);
  if (h.list) {
    const list = h.list.bind(h);
    const read: Read = async (p, _uid, query) => {
      const page = await list(p, parseListRequest(query, spec));
      return {
        json: JSON.stringify(listAnswer(plural, page, toWire)),
      };
    };
    mountOperation(
      t,
      ops.list(),
      async (ctx) =>
        answerRead(ctx, await read(principalOf(ctx), undefined, ctx.query as QueryParams)),
      { kind: 'list', read },
    );
  }
  if (h.get) {
    const read = getRead(h.get.bind(h), toWire);
    mountOperation(t, ops.get(), getHandler(read), { kind: 'get', read });
  }
  if (h.create) {
    const create = h.create.bind(h);
    const handler = (parent: boolean) => async (ctx: Context) => {
      const under = parent ? uidParam(ctx) : undefined;
      if (parent && under === undefined) return;
      const body = await readJsonObject(ctx, o.bodyLimit);
      ctx.body = toWire(await create(principalOf(ctx), under, body));
    };
    if (o.createWithoutParent) mountOperation(t, ops.create(true), handler(false));
    mountOperation(t, ops.create(false), handler(true));
  }
  if (h.update) {
    const update = h.update.bind(h);
    mountOperation(t, ops.update('update'), async (ctx) => {
      const uid = uidParam(ctx);
      if (uid === undefined) return;
      const body = await readJsonObject(ctx, o.bodyLimit);
      const mask = ctx.query.updateMask ?? ctx.query.update_mask;
      const updated = await conditionally(ctx, h, toWire, uid, () =>
        update(principalOf(ctx), uid, body, mask),
      );
      answerRead(ctx, withEtag(toWire(updated)));
    });
  }
  if (h.delete) mountOperation(t, ops.delete(), deleteHandler(h, toWire));
}

export interface V1Options<T, W extends z.ZodType> extends ResourceContract {
  wireSchema: W;
  toWire(item: T): z.output<W>;
  createWithoutParent?: boolean;
  bodyLimit: number;
  /** v1 lists are unpaginated; this bounds one answer. */
  maxItems?: number;
}

/** v1 List: every visible item in `items`, or the one that `id` names. */
function v1ListHandler<T>(
  h: CrudHandlers<T>,
  spec: ListSpec,
  toWire: (item: T) => unknown,
  maxItems: number,
) {
  const list = h.list!.bind(h);
  return async (ctx: Context) => {
    const p = principalOf(ctx);
    const query = { ...(ctx.query as QueryParams) };
    // v1 spells the id filter `id`; it selects one resource.
    const id = query.id;
    delete query.id;
    if (typeof id === 'string' && id !== '' && h.get) {
      try {
        ctx.body = { items: [toWire(await h.get(p, id))] };
      } catch (e) {
        if ((e as { code?: number }).code === 5) ctx.body = { items: [] };
        else throw e;
      }
      return;
    }
    const base = parseListRequest({ ...query, page_size: '200' }, spec);
    const items: unknown[] = [];
    let token: string | undefined;
    do {
      const page = await list(p, { ...base, ...(token ? { pageToken: token } : {}) });
      items.push(...page.items.map(toWire));
      token = page.nextPageToken;
    } while (token && items.length < maxItems);
    ctx.body = { items };
  };
}

/**
 * Mount the v1 contract: `{items}` lists with no pagination, `id`/`createdAt` wire names,
 * and full replacement on update (omitted fields reset), on PUT and PATCH alike.
 */
export function mountV1<T, W extends z.ZodType>(
  t: RouteTarget,
  h: CrudHandlers<T>,
  o: V1Options<T, W>,
): void {
  const toWire = (item: T): unknown => o.toWire(item);
  const ops = new CrudOperations(o, 'v1', o.path.split('/').pop()!);
  if (h.list) mountOperation(t, ops.list(), v1ListHandler(h, o.spec, toWire, o.maxItems ?? 10_000));
  if (h.get) mountOperation(t, ops.get(), getHandler(getRead(h.get.bind(h), toWire)));
  if (h.create) {
    const create = h.create.bind(h);
    const handler = (parent: boolean) => async (ctx: Context) => {
      const under = parent ? uidParam(ctx) : undefined;
      if (parent && under === undefined) return;
      const body = withoutV1OutputFields(await readJsonObject(ctx, o.bodyLimit));
      ctx.body = toWire(await create(principalOf(ctx), under, body));
    };
    if (o.createWithoutParent) mountOperation(t, ops.create(true), handler(false));
    mountOperation(t, ops.create(false), handler(true));
  }
  if (h.update) {
    const update = h.update.bind(h);
    const replace = async (ctx: Context) => {
      const uid = uidParam(ctx);
      if (uid === undefined) return;
      const body = withoutV1OutputFields(await readJsonObject(ctx, o.bodyLimit));
      const updated = await conditionally(ctx, h, toWire, uid, () =>
        update(principalOf(ctx), uid, body, '*'),
      );
      answerRead(ctx, withEtag(toWire(updated)));
    };
    mountOperation(t, ops.update('replace'), replace);
    mountOperation(t, ops.update('update'), replace);
  }
  if (h.delete) mountOperation(t, ops.delete(), deleteHandler(h, toWire));
}
