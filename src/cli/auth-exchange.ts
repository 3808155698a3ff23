import { decodeJwt } from 'jose';

/**
 * The audience Arbor's STS wants: its issuer, as its discovery document names it (the
 * API address a client uses may differ, e.g. behind a proxy). Falls back to `api`.
 */
export async function arborAudience(api: string): Promise<string> {
  try {
    const res = await fetch(`${api.replace(/\/+$/, '')}/.well-known/openid-configuration`);
    const body = (await res.json()) as { issuer?: unknown };
    if (res.ok && typeof body.issuer === 'string' && body.issuer !== '') return body.issuer;
  } catch {
    /* fall back */
  }
  return api;
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
  const q = new URLSearchParams({ aud: audience.replace(/\/+$/, '') });
  if (identity) q.set('identity', identity);
  const res = await fetch(`${api.replace(/\/+$/, '')}/sts/exchange?${q.toString()}`, {
    headers: { authorization: `Bearer ${idToken}` },
  });
  const body = (await res.json().catch(() => ({}))) as {
    token?: string;
    expiry?: string;
    message?: string;
  };
  if (!res.ok || !body.token)
    throw new Error(`Arbor refused the sign-in (${res.status}): ${body.message ?? 'no token'}`);
  return {
    token: body.token,
    expiry: body.expiry ?? '',
    identity: String(decodeJwt(body.token).sub),
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
  const res = await fetch(`${api.replace(/\/+$/, '')}/iam/v2beta1/groupInvites:redeem`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown> & {
    message?: string;
  };
  if (!res.ok) throw new Error(`the invite was refused (${res.status}): ${body.message ?? ''}`);
  const group = body.group as { uid?: string; name?: string } | string | undefined;
  const role = body.role as { uid?: string; name?: string } | string | undefined;
  const label = (v: typeof group) => (typeof v === 'string' ? v : (v?.name ?? v?.uid ?? '?'));
  return { group: label(group), role: label(role) };
}
