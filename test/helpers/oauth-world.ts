import * as client from 'openid-client';
import { createGroup } from './fixtures.js';
import { createBinding, createIdentity } from './iam-fixtures.js';
import { TestIssuer } from './oidc-issuer.js';
import { builtinRoleUid } from './registry-fixtures.js';
import { startGrpcServer, type GrpcTestServer } from './grpc-server.js';

/**
 * The OAuth 2.0 doors (docs/oauth.md) through a real OAuth client (openid-client): the
 * metadata, token exchange with down-scoping, introspection and revocation, and the
 * attacks on them. The issuer is a name (`http://arbor.test`) the client's fetch sends to
 * the server's real address, so discovery checks the issuer exactly as it would in use.
 */
export const ISSUER = 'http://arbor.test';
export const SERVICE = 'registry.oauth.test';
export const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';
export const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';

/** The world of the OAuth tests: a server (REST, gRPC, registry token server), an issuer, a tree. */
export interface OAuthWorld {
  s: GrpcTestServer;
  issuer: TestIssuer;
  org: string;
  folder: string;
  sibling: string;
  otherOrg: string;
  ci: string;
  stranger: string;
}

let w: OAuthWorld;

/** Start the world the helpers below work in (one per test file); `env` adds to its config. */
export async function startOAuthWorld(env: Record<string, string> = {}): Promise<OAuthWorld> {
  const s = await startGrpcServer({
    ARBOR_ALLOW_INSECURE_ISSUERS: 'true',
    ARBOR_ISSUER_URL: ISSUER,
    ARBOR_REGISTRY_SERVICE: SERVICE,
    ...env,
  });
  const issuer = await TestIssuer.start();
  const org = await createGroup(s.admin, 'oauth-org');
  const folder = await createGroup(s.admin, 'team', org);
  const sibling = await createGroup(s.admin, 'other-team', org);
  const otherOrg = await createGroup(s.admin, 'oauth-other');
  const claimMatch = (sub: string) => ({ issuer: issuer.url, subject: sub });
  const ci = await createIdentity(s.admin, org, 'ci', claimMatch('sub-ci'));
  const stranger = await createIdentity(s.admin, otherOrg, 'stranger', claimMatch('sub-stranger'));
  await createBinding(s.admin, org, ci, await builtinRoleUid(s.admin, 'viewer'));
  await createBinding(s.admin, folder, ci, await builtinRoleUid(s.admin, 'registry.push'));
  await createBinding(s.admin, otherOrg, stranger, await builtinRoleUid(s.admin, 'viewer'));
  const made = await s.admin.post(`/registry/v2beta1/repos/${folder}`, { name: 'app' });
  if (made.status !== 200) throw new Error(JSON.stringify(made.body));
  w = { s, issuer, org, folder, sibling, otherOrg, ci, stranger };
  return w;
}

export async function stopOAuthWorld(): Promise<void> {
  await w?.issuer.stop();
  await w?.s.close();
}

/** The client's fetch: the issuer's name is sent to the test server's address. */
const toServer: client.CustomFetch = (url, options) =>
  fetch(url.replace(ISSUER, w.s.url), options as RequestInit);

/** A discovered configuration whose calls authenticate with `bearer` (or as a public client). */
export async function oauthClient(bearer?: string): Promise<client.Configuration> {
  const auth: client.ClientAuth = bearer
    ? (_as, _c, _body, headers) => headers.set('authorization', `Bearer ${bearer}`)
    : client.None();
  const config = await client.discovery(new URL(ISSUER), 'arbor-tests', undefined, auth, {
    algorithm: 'oauth2',
    execute: [client.allowInsecureRequests],
    [client.customFetch]: toServer,
  });
  config[client.customFetch] = toServer;
  return config;
}

export async function workloadToken(sub = 'sub-ci', exp?: number): Promise<string> {
  return w.issuer.mint({ sub, aud: ISSUER }, exp === undefined ? {} : { exp });
}

export async function exchange(params: Record<string, string | string[]>): Promise<string> {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    for (const one of Array.isArray(v) ? v : [v]) form.append(k, one);
  const res = await client.genericGrantRequest(await oauthClient(), EXCHANGE, form);
  return res.access_token;
}

/** A raw POST of `body` to the token endpoint: for what no client library would send. */
export async function rawToken(
  body: string,
  type = 'application/x-www-form-urlencoded',
  path = '/oauth2/token',
) {
  const res = await fetch(`${w.s.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': type },
    body,
  });
  return {
    status: res.status,
    headers: res.headers,
    body: (await res.json()) as Record<string, unknown>,
  };
}

export async function refusal(params: Record<string, string | string[]>): Promise<unknown> {
  const err = await exchange(params).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof client.ResponseBodyError)) throw new Error(`not refused: ${String(err)}`);
  return { error: err.error, status: err.status };
}

export async function fullToken(): Promise<string> {
  return exchange({
    subject_token: await workloadToken(),
    subject_token_type: ID_TOKEN,
    identity: w.ci,
  });
}
