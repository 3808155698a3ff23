import {
  toJson,
  type DescField,
  type DescMessage,
  type DescMethod,
  type DescService,
  type JsonValue,
  type Message,
} from '@bufbuild/protobuf';
import type { FieldMask } from '@bufbuild/protobuf/wkt';
import type { HandlerContext } from '@connectrpc/connect';
import type { Authenticator } from '../auth/authenticator.js';
import type { Principal } from '../auth/principal.js';
import type { z } from 'zod';
import { parseListRequest, type ListRequest } from '../core/list-request.js';
import { invalidField } from '../core/rpc-error.js';
import type { ListPage } from '../resources/list-types.js';
import { rpcPlural, type KindDescriptor } from '../wire/kinds.js';
import { madeOnce } from '../wire/made-once.js';
import { principalOf } from './authn.js';
import type { GrpcRouter, JsonImpl } from './json-rpc.js';
import { listQueryOf } from './list-query.js';
import { assertWellKnownInRange } from './timestamp-input.js';

type Body = Record<string, unknown>;

/** What a resource's service offers a front door; the same methods the REST routes call. */
export interface CrudHandlers<T> {
  create?(p: Principal, parent: string | undefined, body: Body): Promise<T>;
  get?(p: Principal, uid: string): Promise<T>;
  list?(p: Principal, req: ListRequest): Promise<ListPage<T>>;
  update?(p: Principal, uid: string, body: Body, mask: string | string[] | undefined): Promise<T>;
  delete?(p: Principal, uid: string): Promise<void>;
}

/**
 * What the gRPC door reads of a kind's descriptor (wire/kinds.ts): `name` makes GetGroup,
 * CreateGroup, UpdateGroup, DeleteGroup; `plural` ListGroups; `toWire` is the REST door's
 * wire mapping, whose JSON is the proto3 JSON of the resource message, so the gRPC answer
 * is that JSON read as the message: one mapping, equal by construction.
 */
export type CrudKind<T> = Pick<
  KindDescriptor<T, z.ZodType>,
  'name' | 'plural' | 'spec' | 'toWire' | 'createWithoutParent'
>;

/**
 * A resource as proto3 JSON, leaving out what proto3 leaves out (defaults).
 *
 * @throws RpcError INVALID_ARGUMENT when a Timestamp or Duration in it has no JSON form.
 */
export function bodyOf(schema: DescMessage, msg: Message | undefined): Body {
  if (msg === undefined) return {};
  assertWellKnownInRange(msg);
  return toJson(schema, msg) as Body;
}

/** The field of `msg` that holds a message of type `schema` (e.g. CreateGroupRequest.group). */
function fieldOfType(msg: DescMessage, schema: DescMessage): DescField {
  const f = msg.fields.find((x) => x.message?.typeName === schema.typeName);
  if (!f) throw new Error(`${msg.typeName} has no ${schema.typeName} field`);
  return f;
}

function method(service: DescService, name: string): DescMethod {
  const m = service.methods.find((x) => x.name === name);
  if (!m) throw new Error(`${service.typeName} has no method ${name}`);
  return m;
}

/**
 * Serve the AIP-style CRUD methods of one gRPC service from a resource's service: parse
 * the request into what the REST route would have parsed, call the same method with the
 * same principal, shape the answer with the same wire mapping. Rules live in the service.
 * Every answer is the output's proto3 JSON (Delete's is `{}`, Empty).
 */
export function mountCrud<T>(
  router: GrpcRouter,
  authenticator: Authenticator,
  service: DescService,
  h: CrudHandlers<T>,
  o: CrudKind<T>,
): void {
  const rpc = (name: string, impl: JsonImpl) => router.jsonRpc(method(service, name), impl);
  const who = (ctx: HandlerContext) => principalOf(authenticator, ctx);
  const get = method(service, `Get${o.name}`);
  const resource = get.output;
  const answer = (item: T) => o.toWire(item) as JsonValue;

  if (h.get) {
    const fn = h.get.bind(h);
    // A frozen item is one a read cache shares between calls: its wire form is made once
    // (and frozen, so that the unary fast path sends the frame it encoded once), as the
    // REST door's Get makes its JSON once.
    const shared = madeOnce(answer);
    rpc(get.name, async (req, ctx) => shared(await fn(await who(ctx), req.uid as string)));
  }
  if (h.list) {
    const fn = h.list.bind(h);
    const list = method(service, `List${rpcPlural(o)}`);
    const items = list.output.fields.find((f) => f.fieldKind === 'list');
    if (!items) throw new Error(`${list.output.typeName} has no repeated field`);
    rpc(list.name, async (req, ctx) => {
      const query = listQueryOf(bodyOf(list.input, req) as JsonValue);
      const page = await fn(await who(ctx), parseListRequest(query, o.spec));
      return {
        [items.jsonName]: page.items.map((i) => o.toWire(i) as JsonValue),
        nextPageToken: page.nextPageToken ?? '',
        totalCount: page.totalCount ?? null,
        skipped: page.skipped ?? null,
      };
    });
  }
  if (h.create) {
    const fn = h.create.bind(h);
    const m = method(service, `Create${o.name}`);
    const field = fieldOfType(m.input, resource);
    rpc(m.name, async (req, ctx) => {
      const p = await who(ctx);
      const parent = (req.parent as string) || undefined;
      if (parent === undefined && !o.createWithoutParent)
        throw invalidField('parent', 'is required');
      const body = bodyOf(resource, req[field.localName] as Message | undefined);
      return answer(await fn(p, parent, body));
    });
  }
  if (h.update) {
    const fn = h.update.bind(h);
    const m = method(service, `Update${o.name}`);
    const field = fieldOfType(m.input, resource);
    rpc(m.name, async (req, ctx) => {
      const p = await who(ctx);
      const msg = req[field.localName] as (Message & { uid?: string }) | undefined;
      const paths = (req.updateMask as FieldMask | undefined)?.paths ?? [];
      // The uid names the resource; it is output only in the body and ignored there.
      const uid = msg?.uid ?? '';
      return answer(await fn(p, uid, bodyOf(resource, msg), paths.length ? paths : undefined));
    });
  }
  if (h.delete) {
    const fn = h.delete.bind(h);
    rpc(`Delete${o.name}`, async (req, ctx) => {
      await fn(await who(ctx), req.uid as string);
      return {};
    });
  }
}
