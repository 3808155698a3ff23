import type pg from 'pg';
import { TestIssuer } from '../test/helpers/oidc-issuer.js';
import type { SortKey } from '../src/resources/list-types.js';
import { STS_IDENTITIES, STS_SUBJECT, identityUid, type Scale } from './scale.js';

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

export function exchangeBody(arborUrl: string, identity: string): string {
  return new URLSearchParams({ aud: arborUrl, identity }).toString();
}

/** One STS exchange: the Arbor API token for `identity`. */
export async function exchange(arborUrl: string, sts: Sts, identity: string): Promise<string> {
  const res = await fetch(`${arborUrl}/sts/exchange`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${sts.upstream}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: exchangeBody(arborUrl, identity),
  });
  const body = (await res.json()) as { token?: string };
  if (!res.ok || !body.token)
    throw new Error(`STS exchange: ${res.status} ${JSON.stringify(body)}`);
  return body.token;
}

export async function getJson<T>(url: string, token: string): Promise<T> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const body = (await res.json()) as T;
  if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

interface GroupsPage {
  groups: Array<{ uid: string; name: string }>;
  nextPageToken?: string;
  totalCount: string;
}

/**
 * Follow Arbor's own sealed page tokens through `rows` rows (pages of up to 200, the
 * maximum), as a client would. Returns the token for the next row and its seek key.
 */
export async function walk(base: string, token: string, rows: number) {
  let pageToken: string | undefined;
  let after: SortKey = [];
  let left = rows;
  let requests = 0;
  const t0 = performance.now();
  while (left > 0) {
    const size = Math.min(200, left);
    const page = await getJson<GroupsPage>(
      `${base}&page_size=${size}${pageToken ? `&page_token=${pageToken}` : ''}`,
      token,
    );
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
