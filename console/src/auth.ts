/**
 * Signing in. The API token lives in sessionStorage (this tab only, gone when it closes),
 * never in a cookie: the API reads bearer tokens only, so no other site's request can
 * carry it. Two ways in: paste a token, or the server's login provider with authorization
 * code + PKCE (S256), state and nonce, then the ID token traded at `/sts/exchange` for an
 * API token of the person's own identity, as `arbor auth login` does.
 */

const TOKEN = 'arbor.console.token';
const PENDING = 'arbor.console.pkce';
export const CALLBACK_PATH = '/console/callback';

export function getToken(): string | undefined {
  return sessionStorage.getItem(TOKEN) ?? undefined;
}
export function setToken(token: string): void {
  sessionStorage.setItem(TOKEN, token.trim());
}
export function clearToken(): void {
  sessionStorage.removeItem(TOKEN);
}

/** The token a sign-in link (`#token=…`) brought in, to word its refusal as the link's. */
let linkToken: string | undefined;

/**
 * The address a development server prints (`/console/#token=…`): the token is kept as if
 * pasted and leaves the address bar (and history) at once, before anything renders. A
 * fragment never reaches a server, nor a Referer. A token whose `exp` has passed is not
 * kept: the answer says why (the sign-in page would otherwise come up without a word).
 */
export function takeTokenFromAddress(): string | undefined {
  const m = /^#token=([^&]*)$/.exec(location.hash);
  if (!m) return undefined;
  history.replaceState(null, '', location.pathname + location.search);
  let token = '';
  try {
    token = decodeURIComponent(m[1]!).trim();
  } catch {
    /* not even percent-encoding: an empty token, refused below */
  }
  if (token === '') return STALE_LINK;
  if (tokenExpired(token)) return EXPIRED_LINK;
  linkToken = token;
  setToken(token);
  return undefined;
}

const EXPIRED_LINK =
  'The sign-in link has expired. Sign in again: a development run prints a new link when it starts, or paste a token below.';
const STALE_LINK =
  'The sign-in link is not valid (it may be from an earlier run of the server, or cut short). Sign in again: open the newest link, or paste a token below.';
const SIGNED_OUT = 'Your sign-in is no longer accepted (it expired or was revoked). Sign in again.';

/** What to say when the server refused `token` (401): a link's words when it came from one. */
export function refusalNotice(token: string): string {
  return token === linkToken ? STALE_LINK : SIGNED_OUT;
}

/** Whether a JWT's `exp` (seconds) has passed; a token without one (or no JWT) is not. */
export function tokenExpired(token: string, now = Date.now()): boolean {
  try {
    const part = token.split('.')[1] ?? '';
    const exp = (JSON.parse(atob(part.replace(/-/g, '+').replace(/_/g, '/'))) as { exp?: unknown })
      .exp;
    return typeof exp === 'number' && exp * 1000 <= now;
  } catch {
    return false;
  }
}

/** The `sub` of a JWT (who the token speaks for), unverified: for display only. */
export function tokenSubject(token: string): string | undefined {
  const sub = tokenClaims(token)?.sub;
  return typeof sub === 'string' ? sub : undefined;
}

/**
 * The current actor (an identity's uid) of a delegated token, or undefined: the first of
 * `arbor_actors`, the chain Arbor signs into a token made with an `actor_token`. Not `act`,
 * which every API token carries (the upstream token it was exchanged from). Shown beside
 * the subject, never trusted (the server decides from the verified token).
 */
export function tokenActor(token: string): string | undefined {
  const actors = tokenClaims(token)?.arbor_actors;
  const first: unknown = Array.isArray(actors) ? actors[0] : undefined;
  return typeof first === 'string' ? first : undefined;
}

function tokenClaims(token: string): Record<string, unknown> | undefined {
  try {
    const part = token.split('.')[1] ?? '';
    const json = atob(part.replace(/-/g, '+').replace(/_/g, '/'));
    const claims = JSON.parse(json) as unknown;
    return typeof claims === 'object' && claims !== null
      ? (claims as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

export interface LoginConfiguration {
  audience: string;
  issuer?: string;
  clientId?: string;
}

interface Pending {
  issuer: string;
  clientId: string;
  audience: string;
  tokenEndpoint: string;
  verifier: string;
  state: string;
  nonce: string;
}

function base64url(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function random(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

async function json<T>(url: string, init?: RequestInit): Promise<T> {
  const res = await fetch(url, { credentials: 'omit', ...init });
  const body = (await res.json().catch(() => undefined)) as T | undefined;
  if (!res.ok || body === undefined) {
    const m = (body as { message?: unknown; error?: unknown } | undefined) ?? {};
    const why =
      typeof m.message === 'string' ? m.message : typeof m.error === 'string' ? m.error : '';
    throw new Error(`${url} answered ${res.status}${why ? `: ${why}` : ''}`);
  }
  return body;
}

export function loginConfiguration(): Promise<LoginConfiguration> {
  return json<LoginConfiguration>('/.well-known/arbor-login');
}

/** Off to the login provider; the browser comes back to {@link CALLBACK_PATH}. */
export async function startLogin(c: LoginConfiguration): Promise<void> {
  if (!c.issuer || !c.clientId) throw new Error('This server publishes no login provider.');
  const discovery = await json<{
    issuer?: string;
    authorization_endpoint?: string;
    token_endpoint?: string;
  }>(`${c.issuer}/.well-known/openid-configuration`);
  if (
    discovery.issuer !== c.issuer ||
    !discovery.authorization_endpoint ||
    !discovery.token_endpoint
  )
    throw new Error('The login provider’s discovery document does not match its issuer.');
  const pending: Pending = {
    issuer: c.issuer,
    clientId: c.clientId,
    audience: c.audience,
    tokenEndpoint: discovery.token_endpoint,
    verifier: random(),
    state: random(),
    nonce: random(),
  };
  sessionStorage.setItem(PENDING, JSON.stringify(pending));
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(pending.verifier));
  const url = new URL(discovery.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: c.clientId,
    redirect_uri: location.origin + CALLBACK_PATH,
    scope: 'openid email profile',
    code_challenge: base64url(new Uint8Array(digest)),
    code_challenge_method: 'S256',
    state: pending.state,
    nonce: pending.nonce,
  }).toString();
  location.assign(url.toString());
}

function claimsOf(jwt: string): Record<string, unknown> {
  const part = jwt.split('.')[1] ?? '';
  return JSON.parse(atob(part.replace(/-/g, '+').replace(/_/g, '/'))) as Record<string, unknown>;
}

/**
 * Back from the provider: state checked, code redeemed with the verifier, the ID token's
 * nonce, issuer and audience checked (its signature is the STS's to verify), then traded
 * for an API token. @throws Error saying what failed; nothing is kept then.
 */
export async function finishLogin(current: URL): Promise<void> {
  const raw = sessionStorage.getItem(PENDING);
  sessionStorage.removeItem(PENDING);
  if (!raw) throw new Error('No sign-in was started in this tab.');
  const p = JSON.parse(raw) as Pending;
  const q = current.searchParams;
  if (q.get('error')) throw new Error(`The login provider refused: ${q.get('error')}`);
  if (q.get('state') !== p.state) throw new Error('The sign-in answer does not match (state).');
  const iss = q.get('iss');
  if (iss !== null && iss !== p.issuer)
    throw new Error('The sign-in answer came from another issuer.');
  const tokens = await json<{ id_token?: string }>(p.tokenEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: q.get('code') ?? '',
      redirect_uri: location.origin + CALLBACK_PATH,
      client_id: p.clientId,
      code_verifier: p.verifier,
    }).toString(),
  });
  if (!tokens.id_token) throw new Error('The login provider returned no ID token.');
  const claims = claimsOf(tokens.id_token);
  const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (claims.nonce !== p.nonce || claims.iss !== p.issuer || !aud.includes(p.clientId))
    throw new Error('The ID token is not the one this sign-in asked for.');
  const answer = await json<{ token?: string }>(
    `/sts/exchange?${new URLSearchParams({ aud: p.audience }).toString()}`,
    { headers: { authorization: `Bearer ${tokens.id_token}` } },
  );
  if (!answer.token) throw new Error('Arbor returned no token.');
  setToken(answer.token);
}
