import type pg from 'pg';
import { createArborClient, formBody, type paths } from '../src/client/index.js';
import { TestIssuer } from '../test/helpers/oidc-issuer.js';
import type { SortKey } from '../src/resources/list-types.js';
import type { Target } from './load.js';
import { ADMIN_TOKEN, STS_IDENTITIES, STS_SUBJECT, identityUid, type Scale } from './scale.js';

export interface Sts {
  issuer: TestIssuer;
  /** An RS256 token of the loopback issuer, for Arbor's audience. */
  upstream: string;
  /** Identities (0, j < 16) whose claim match accepts `upstream`; [0] is the org-0 viewer. */
  identities: string[];
}

/**
 * A loopback OIDC issuer (the tests' TestIssuer: discovery + JWKS over HTTP) and the
 * identities that trust it. Their claim match is rewritten on every run, since the
 * issuer's port changes.
 */
export async function prepareSts(c: pg.ClientBase, arborUrl: string, s: Scale): Promise<Sts> {
  const issuer = await TestIssuer.start('RS256');
  const identities = Array.from({ length: STS_IDENTITIES }, (_, j) => identityUid(0, j, s.teams));
  const { rowCount } = await c.query(
    'UPDATE identities SET claim_match = $1, static_keys = NULL WHERE uid = ANY($2)',
    [JSON.stringify({ issuer: issuer.url, subject: STS_SUBJECT }), identities],
  );
  if (rowCount !== identities.length) throw new Error('STS identities are missing');
  const upstream = await issuer.mint(
    { sub: STS_SUBJECT, aud: arborUrl },
    { exp: Math.floor(Date.now() / 1000) + 3 * 3600 },
  );
  return { issuer, upstream, identities };
}

/**
 * The repository the registry token case pulls, created by the admin unless an earlier run
 * (the database is kept) did; its path `<group uid>/<name>` is what a client names.
 */
export async function ensureRepo(arborUrl: string, group: string, name: string): Promise<string> {
  const res = await fetch(`${arborUrl}/registry/v2beta1/repos/${group}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  if (res.status !== 200 && res.status !== 409)
    throw new Error(`create repo ${name}: ${res.status} ${await res.text()}`);
  return `${group}/${name}`;
}

/**
 * crane's token request for a pull (go-containerregistry's `refreshBasic`, the flow every
 * `crane auth login -u _token -p <API token>` / `docker login` user gets): GET on the realm
 * with `scope` and `service` encoded by Go's url.Values (sorted keys, `:` and `/` escaped),
 * Basic `_token:<API token>`, and Go's default Accept-Encoding.
 */
export function registryTokenRequest(
  arborUrl: string,
  repo: string,
  service: string,
  apiToken: string,
): Target {
  const scope = `repository:${repo}:pull`;
  return {
    url:
      `${arborUrl}/auth/registry/token?` +
      `scope=${encodeURIComponent(scope)}&service=${encodeURIComponent(service)}`,
    headers: {
      authorization: `Basic ${Buffer.from(`_token:${apiToken}`).toString('base64')}`,
      'user-agent': 'crane/v0.20.6 go-containerregistry/v0.20.6',
      'accept-encoding': 'gzip',
    },
  };
}

/**
 * The STS case's load: the form-encoded exchange of `sts.upstream`, each client asking for
 * one of `sts.identities` in turn (bench/cases.ts's `sts`, as bench/profile.ts and
 * bench/memory-probe.ts load it).
 */
export function stsExchangeRequest(arborUrl: string, sts: Sts): Target {
  return {
    url: `${arborUrl}/sts/exchange`,
    method: 'POST',
    headers: {
      authorization: `Bearer ${sts.upstream}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    perClient: sts.identities.map((id) => ({
      path: '/sts/exchange',
      body: exchangeBody(arborUrl, id),
    })),
  };
}

export function exchangeBody(arborUrl: string, identity: string): string {
  return formBody({ aud: arborUrl, identity });
}

/** One STS exchange (the form-encoded POST): the Arbor API token for `identity`. */
export async function exchange(arborUrl: string, sts: Sts, identity: string): Promise<string> {
  const { data, error, response } = await createArborClient(arborUrl).POST('/sts/exchange', {
    body: { aud: arborUrl, identity },
    bodySerializer: formBody,
    headers: {
      authorization: `Bearer ${sts.upstream}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
  });
  if (!data) throw new Error(`STS exchange: ${response.status} ${JSON.stringify(error)}`);
  return data.token;
}

export async function getJson<T>(url: string, token: string): Promise<T> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const body = (await res.json()) as T;
  if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

type GroupsQuery = NonNullable<paths['/iam/v2beta1/groups']['get']['parameters']['query']>;

/**
 * Follow Arbor's own sealed page tokens through `rows` rows (pages of up to 200, the
 * maximum) of the groups `query` selects, as a client would. Returns the token for the
 * next row and its seek key.
 */
export async function walk(arborUrl: string, token: string, query: GroupsQuery, rows: number) {
  const arbor = createArborClient(arborUrl, { token });
  let pageToken: string | undefined;
  let after: SortKey = [];
  let left = rows;
  let requests = 0;
  const t0 = performance.now();
  while (left > 0) {
    const size = Math.min(200, left);
    const { data: page, error } = await arbor.GET('/iam/v2beta1/groups', {
      params: {
        query: { ...query, page_size: size, ...(pageToken ? { page_token: pageToken } : {}) },
      },
    });
    if (!page) throw new Error(`walk: ${JSON.stringify(error)}`);
    requests++;
    const last = page.groups[page.groups.length - 1];
    if (!page.nextPageToken || !last || page.groups.length !== size)
      throw new Error(`walk ended early after ${rows - left} rows`);
    pageToken = page.nextPageToken;
    after = [last.name, last.uid];
    left -= size;
  }
  return { pageToken: pageToken!, after, requests, ms: performance.now() - t0 };
}
