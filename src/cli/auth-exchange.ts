import { decodeJwt } from 'jose';
import { createArborClient, type Status } from '../client/index.js';

/** The server's words for a refusal, whatever its body was (a proxy may answer HTML). */
function messageOf(error: unknown): string | undefined {
  const m = (error as Partial<Status> | undefined)?.message;
  return typeof m === 'string' ? m : undefined;
}

/**
 * The audience Arbor's STS wants: its issuer, as its discovery document names it (the
 * API address a client uses may differ, e.g. behind a proxy). Falls back to `api`.
 */
export async function arborAudience(api: string): Promise<string> {
  try {
    const { data } = await createArborClient(api).GET('/.well-known/openid-configuration');
    if (typeof data?.issuer === 'string' && data.issuer !== '') return data.issuer;
  } catch {
    /* unreachable, or not JSON: fall back */
  }
  return api;
}

/**
 * What the server publishes for signing in (`/.well-known/arbor-login`): its login
 * provider, when it has one, and the STS audience. Undefined when it publishes nothing
 * (an older server) or cannot be reached.
 */
export async function publishedLogin(
  api: string,
): Promise<{ audience?: string; issuer?: string; clientId?: string } | undefined> {
  try {
    const { data } = await createArborClient(api).GET('/.well-known/arbor-login');
    return data;
  } catch {
    return undefined;
  }
}

/**
 * Trade an ID token at Arbor's STS for an API token: of `identity` when given, else of
 * the person's own user identity (registered on first sign-in, spec §5.2).
 * @throws Error with the server's message when refused.
 */
export async function exchangeIdToken(
  api: string,
  audience: string,
  idToken: string,
  identity?: string,
): Promise<{ token: string; expiry: string; identity: string }> {
  const aud = audience.replace(/\/+$/, '');
  let answer: { token?: string; expiry?: string } | undefined;
  let status = 0;
  let message: string | undefined;
  try {
    const { data, error, response } = await createArborClient(api).GET('/sts/exchange', {
      params: { query: { aud: [aud], ...(identity ? { identity } : {}) } },
      // The credential here is the ID token, not an Arbor token.
      headers: { authorization: `Bearer ${idToken}` },
    });
    answer = data;
    status = response.status;
    message = messageOf(error);
  } catch (e) {
    // A success that is not JSON is refused below; an unreachable server is its own error.
    if (!(e instanceof SyntaxError)) throw e;
  }
  if (!answer?.token)
    throw new Error(`Arbor refused the sign-in (${status}): ${message ?? 'no token'}`);
  return {
    token: answer.token,
    expiry: answer.expiry ?? '',
    identity: String(decodeJwt(answer.token).sub),
  };
}

/**
 * Redeem a group invite with an API token: the caller is bound with the invite's role at
 * its group. @throws Error with the server's message when refused (used, expired, unknown).
 */
export async function redeemInvite(
  api: string,
  token: string,
  code: string,
): Promise<{ group: string; role: string }> {
  const { data, error, response } = await createArborClient(api, { token }).POST(
    '/iam/v2beta1/groupInvites:redeem',
    { body: { code } },
  );
  if (!data)
    throw new Error(`the invite was refused (${response.status}): ${messageOf(error) ?? ''}`);
  const label = (v: { uid: string; name: string }) => v.name || v.uid;
  return { group: label(data.group), role: label(data.role) };
}
