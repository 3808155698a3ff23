import { formatOrderBy } from '../core/order-by.js';
import type { ListRequest, ListSpec } from '../core/list-request.js';
import { queryFingerprint, viewFingerprint, type PageTokenCodec } from '../core/page-token.js';
import { isSelfOrBelow } from '../core/uidp.js';
import type { Visibility } from '../core/visibility.js';
import type { ListPage, PageQuery, SortKey, StorePage } from './list-types.js';

/**
 * The list contract, once for every resource: decode the page token against this exact
 * query, ask the store for one keyset page, seal the next position into a new token.
 */
export interface ListPagerOptions {
  /** How long a first page's count is reused for the same query and visibility. */
  countTtlMs?: number;
  /** The unit of work's write generation: a write in this process forgets every count. */
  writeGeneration?: () => number;
  now?: () => number;
}

export class ListPager {
  /** Recent first-page counts: many clients asking the same list count it once. */
  readonly #counts = new Map<
    string,
    { at: number; generation: number; total: string; until: number }
  >();
  readonly #ttl: number;
  readonly #generation: () => number;
  readonly #now: () => number;

  constructor(
    private readonly codec: PageTokenCodec,
    o: ListPagerOptions = {},
  ) {
    this.#ttl = o.countTtlMs ?? 2_000;
    this.#generation = o.writeGeneration ?? (() => 0);
    this.#now = o.now ?? Date.now;
  }

  private cachedCount(key: string): string | undefined {
    const hit = this.#counts.get(key);
    if (!hit) return undefined;
    const now = this.#now();
    if (hit.generation === this.#generation() && now - hit.at < this.#ttl && now < hit.until)
      return hit.total;
    this.#counts.delete(key);
    return undefined;
  }

  private rememberCount(key: string, total: string, generation: number, until = Infinity): void {
    if (this.#counts.size >= 1_000) this.#counts.clear();
    this.#counts.set(key, { at: this.#now(), generation, total, until });
  }

  /**
   * `maintained` says whether the store keeps an exact total for a query that it reads in
   * constant time (group counters): such a total is read fresh on every page, neither
   * shared between first pages nor carried along a cursor chain (docs/adr/0003).
   *
   * `countScope` names whatever else than `visibility` the count depends on (who-can: the
   * caller and what it may see of bindings and identities): first pages share a count only
   * when it is the same.
   *
   * @throws RpcError INVALID_ARGUMENT for a forged token or one minted for another query.
   */
  async page<T>(
    spec: ListSpec,
    req: ListRequest,
    visibility: Visibility,
    fetch: (q: PageQuery) => Promise<StorePage<T>>,
    maintained?: (q: Pick<PageQuery, 'uidp' | 'filters' | 'visibility'>) => boolean,
    countScope = '',
  ): Promise<ListPage<T>> {
    const fingerprint = queryFingerprint({
      kind: spec.kind,
      uidp: req.uidp,
      filters: req.filters,
      order: formatOrderBy(req.orderBy),
    });
    // A query anchored inside one of the caller's scopes sees only visible rows anyway;
    // dropping the filter keeps the plan a plain index seek (and the count index-only).
    const anchor = req.uidp.descendantsOf ?? req.uidp.childrenOf;
    if (
      visibility.kind === 'scopes' &&
      anchor !== undefined &&
      visibility.scopes.some((s) => isSelfOrBelow(s, anchor))
    ) {
      visibility = { kind: 'all' };
    }
    const viewKey = `${JSON.stringify(visibility)}\0${countScope}`;
    const view = viewFingerprint(viewKey);
    let after: SortKey | undefined;
    let knownTotal: string | undefined;
    if (req.pageToken) {
      const decoded = this.codec.decode(req.pageToken, fingerprint);
      // An expired token restarts the query from the top, without an error (spec §7 rule 3).
      if (decoded.kind === 'position') {
        after = decoded.position.key;
        // totalCount is counted once per cursor chain, on its first page (docs/adr/0003),
        // for the view it was counted in: a token replayed by a caller who sees otherwise
        // (another caller, or grants that changed) is counted afresh for that view.
        if (decoded.position.view === view) knownTotal = decoded.position.total;
      }
    }
    const exact = maintained?.({ uidp: req.uidp, filters: req.filters, visibility }) ?? false;
    if (exact) knownTotal = undefined;
    // First pages share a recent count of the same query and visibility (docs/adr/0003).
    const countKey = `${fingerprint}\0${viewKey}`;
    const generation = this.#generation();
    if (knownTotal === undefined && !req.pageToken && !exact)
      knownTotal = this.cachedCount(countKey);
    const page = await fetch({
      uidp: req.uidp,
      filters: req.filters,
      order: req.orderBy,
      ...(after ? { after } : {}),
      skip: req.skip,
      pageSize: req.pageSize,
      visibility,
      ...(knownTotal === undefined ? {} : { knownTotal }),
    });
    if (knownTotal === undefined && !exact)
      this.rememberCount(countKey, page.total, generation, page.totalUntil);
    return {
      items: page.items,
      ...(page.nextKey
        ? {
            nextPageToken: this.codec.encode({
              query: fingerprint,
              key: page.nextKey,
              total: page.total,
              view,
            }),
          }
        : {}),
      totalCount: page.total,
      skipped: req.skip,
    };
  }
}
