import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Principal } from '../../auth/principal.js';
import {
  parseListRequest,
  type ListRequest,
  type ListSpec,
  type QueryParams,
} from '../../core/list-request.js';
import type { ListPage } from '../../resources/list-types.js';
import { withPrecondition } from '../../resources/precondition.js';
import { etagOf, etagOfJson, ifMatchOf } from '../etag.js';
import { principalOf } from '../middleware/authn.js';
import { readJsonObject } from '../middleware/json-body.js';

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

/** A Get or Update answer: the resource with its ETag, serialised once for both. */
function answer(ctx: Context, wire: unknown): void {
  const json = JSON.stringify(wire);
  ctx.set('ETag', etagOfJson(json));
  ctx.type = 'application/json';
  ctx.body = json;
}

/** DELETE `<path>/<uid>`: an empty JSON body on success, in v1 and v2 alike. */
function mountDelete<T>(
  router: Router,
  path: string,
  h: CrudHandlers<T>,
  toWire: (item: T) => unknown,
): void {
  const del = h.delete!.bind(h);
  router.delete(`${path}/{*uid}`, async (ctx) => {
    const uid = uidParam(ctx);
    if (uid === undefined) return;
    await conditionally(ctx, h, toWire, uid, () => del(principalOf(ctx), uid));
    ctx.status = 200;
    ctx.body = {};
  });
}

export interface V2Options<T> {
  /** Path of the collection, e.g. `/iam/v2beta1/groups`. */
  path: string;
  /** Key of the array in List responses, e.g. `groups`. */
  plural: string;
  spec: ListSpec;
  toWire(item: T): unknown;
  /** Whether `POST <path>` with no parent is a valid create (root groups). */
  createWithoutParent?: boolean;
  bodyLimit: number;
}

function uidParam(ctx: Context): string | undefined {
  const v = (ctx.params as Record<string, string | undefined>).uid;
  return v === undefined || v === '' ? undefined : v;
}

/**
 * Mount the v2 contract for one resource: List/Get on GET, Create on POST to the parent,
 * Update on PATCH with `updateMask`, Delete with an empty body. One shape for every kind.
 */
export function mountV2<T>(router: Router, h: CrudHandlers<T>, o: V2Options<T>): void {
  const { path, plural, spec, toWire } = o;
  if (h.list || h.get) {
    router.get(`${path}{/*uid}`, async (ctx) => {
      const uid = uidParam(ctx);
      if (uid === undefined) {
        if (!h.list) return;
        const page = await h.list(
          principalOf(ctx),
          parseListRequest(ctx.query as QueryParams, spec),
        );
        ctx.body = {
          [plural]: page.items.map(toWire),
          ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
          totalCount: page.totalCount,
          skipped: page.skipped,
        };
      } else {
        if (!h.get) return;
        answer(ctx, toWire(await h.get(principalOf(ctx), uid)));
      }
    });
  }
  if (h.create) {
    const create = h.create.bind(h);
    router.post(`${path}{/*uid}`, async (ctx) => {
      const parent = uidParam(ctx);
      if (parent === undefined && !o.createWithoutParent) return;
      const body = await readJsonObject(ctx, o.bodyLimit);
      ctx.body = toWire(await create(principalOf(ctx), parent, body));
    });
  }
  if (h.update) {
    const update = h.update.bind(h);
    router.patch(`${path}/{*uid}`, async (ctx) => {
      const uid = uidParam(ctx);
      if (uid === undefined) return;
      const body = await readJsonObject(ctx, o.bodyLimit);
      const mask = ctx.query.updateMask ?? ctx.query.update_mask;
      const updated = await conditionally(ctx, h, toWire, uid, () =>
        update(principalOf(ctx), uid, body, mask),
      );
      answer(ctx, toWire(updated));
    });
  }
  if (h.delete) mountDelete(router, path, h, toWire);
}

export interface V1Options<T> {
  path: string;
  spec: ListSpec;
  toWire(item: T): unknown;
  createWithoutParent?: boolean;
  bodyLimit: number;
  /** v1 lists are unpaginated; this bounds one answer. */
  maxItems?: number;
}

/**
 * Mount the v1 contract: `{items}` lists with no pagination, `id`/`createdAt` wire names,
 * and full replacement on update (omitted fields reset), on PUT and PATCH alike.
 */
export function mountV1<T>(router: Router, h: CrudHandlers<T>, o: V1Options<T>): void {
  const { path, spec, toWire } = o;
  const maxItems = o.maxItems ?? 10_000;
  router.get(`${path}{/*uid}`, async (ctx) => {
    const uid = uidParam(ctx);
    const p = principalOf(ctx);
    if (uid !== undefined) {
      if (!h.get) return;
      answer(ctx, toWire(await h.get(p, uid)));
      return;
    }
    if (!h.list) return;
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
      const page = await h.list(p, { ...base, ...(token ? { pageToken: token } : {}) });
      items.push(...page.items.map(toWire));
      token = page.nextPageToken;
    } while (token && items.length < maxItems);
    ctx.body = { items };
  });
  if (h.create) {
    const create = h.create.bind(h);
    router.post(`${path}{/*uid}`, async (ctx) => {
      const parent = uidParam(ctx);
      if (parent === undefined && !o.createWithoutParent) return;
      ctx.body = toWire(
        await create(
          principalOf(ctx),
          parent,
          withoutV1OutputFields(await readJsonObject(ctx, o.bodyLimit)),
        ),
      );
    });
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
      answer(ctx, toWire(updated));
    };
    router.put(`${path}/{*uid}`, replace);
    router.patch(`${path}/{*uid}`, replace);
  }
  if (h.delete) mountDelete(router, path, h, toWire);
}
